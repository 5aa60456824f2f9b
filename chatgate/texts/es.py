"""Spanish texts."""

from __future__ import annotations

from chatgate.model.text_ids import Template
from chatgate.model.text_ids import TextId as T

TEXTS: dict[T, Template] = {
    T.FAILURE_SETUP: (
        "Lo siento, ahora no puedo responder por un problema de mi parte. "
        "Inténtalo de nuevo más tarde."
    ),
    T.FAILURE_BUSY: (
        "Estoy recibiendo más solicitudes de las que puedo atender. "
        "Inténtalo de nuevo en un minuto."
    ),
    T.FAILURE_BUSY_WAIT: (
        "Estoy recibiendo más solicitudes de las que puedo atender. Inténtalo de nuevo en {wait}."
    ),
    T.FAILURE_TIMEOUT: (
        "Tardé demasiado, así que me detuve. "
        "Vuelve a enviarlo o divide tu solicitud en partes más pequeñas."
    ),
    T.FAILURE_TOO_LONG: (
        "Esta conversación se ha vuelto demasiado larga para mí. "
        "Envía {new} para empezar una nueva o envía un mensaje más corto."
    ),
    T.FAILURE_CANCELLED: "La solicitud se canceló.",
    T.FAILURE_INVALID: ("No pude procesar esa solicitud. Reformúlala e inténtalo de nuevo."),
    T.FAILURE_UNAVAILABLE: (
        "Ahora no puedo responder porque un servicio del que dependo no funciona. "
        "Inténtalo de nuevo en unos minutos."
    ),
    T.FAILURE_UNAVAILABLE_WAIT: (
        "Ahora no puedo responder porque un servicio del que dependo no funciona. "
        "Inténtalo de nuevo en {wait}."
    ),
    T.FAILURE_OVERLOADED_HERE: "Estoy ocupado ahora mismo, vuelve a enviarlo en un minuto.",
    T.FAILURE_UNKNOWN: "Algo salió mal al responder. Vuelve a enviar tu mensaje.",
    T.FAILURE_TOOL_LIMIT: (
        "Eso necesitaba más pasos de los que puedo dar por un mensaje, así que me detuve. "
        "Divide tu solicitud en partes más pequeñas."
    ),
    T.FAILURE_TOOL_TIMEOUT: (
        "Una herramienta que estaba usando tardó demasiado en responder, así que me detuve. "
        "Inténtalo de nuevo en un minuto."
    ),
    T.FAILURE_TOOL_BUDGET: (
        "Eso necesitaba más trabajo del que puedo hacer por un mensaje, así que me detuve. "
        "Pide menos cosas a la vez."
    ),
    T.FAILURE_TOOL_FAILED: (
        "Una herramienta que estaba usando dejó de funcionar, así que no pude terminar. "
        "Inténtalo de nuevo en un minuto."
    ),
    T.HELP_TITLE: "Comandos:",
    T.HELP_NEW: "empezar una conversación nueva",
    T.HELP_STOP: "cancelar la respuesta en curso",
    T.HELP_STATUS: "qué estoy haciendo ahora",
    T.HELP_HELP: "esta lista",
    T.STOPPED: "Detenido.",
    T.NOTHING_TO_STOP: "No hay nada que detener: ahora no estoy trabajando en nada para ti.",
    T.NEW_SESSION: (
        "Empecé una conversación nueva. Los mensajes anteriores ya no forman parte del contexto."
    ),
    T.QUEUE_FULL: (
        "Todavía estoy con tus mensajes anteriores, así que omití este. "
        "Espera mi respuesta y luego vuelve a enviarlo."
    ),
    T.RATE_LIMITED: (
        "Envías mensajes más rápido de lo que puedo responder, así que omití este. "
        "Espera {wait} y vuelve a enviarlo."
    ),
    T.PAIRING_PROMPT: (
        "{hello} Todavía no te conozco, así que no puedo responder. Para obtener acceso, envía "
        "este código a la persona que gestiona este bot:\n\n{code}\n\nEl código caduca en "
        "{expires}."
    ),
    T.PAIRING_HELLO: "¡Hola, {name}!",
    T.PAIRING_HELLO_ANONYMOUS: "¡Hola!",
    T.PAIRING_FULL: (
        "Ahora no puedo aceptar nuevas solicitudes de acceso. Inténtalo de nuevo en una hora."
    ),
    T.PAIRING_APPROVED: "Ya tienes acceso. Vuelve a enviar tu mensaje y te responderé.",
    T.STALE_NOTICE: (
        "Estaba desconectado cuando escribiste esto. Vuelve a enviarlo si todavía es relevante."
    ),
    T.STATE_AWAY: (
        "Ahora mismo no puedo acceder a mi memoria. Responderé en cuanto vuelva; "
        "no hace falta que lo reenvíes."
    ),
    T.MEDIA_TOO_LARGE: (
        "{name} supera {max}, el máximo que acepta este bot; envía un archivo más pequeño."
    ),
    T.MEDIA_TOO_LARGE_TELEGRAM: (
        "{name} supera {max}, el máximo que acepta este bot (Telegram solo deja a los "
        "bots descargar archivos de hasta 20 MB); envía un archivo más pequeño."
    ),
    T.MEDIA_TOO_LONG: "{name} dura más de {duration}, lo máximo que transcribe este bot.",
    T.MEDIA_TOO_MANY: {
        "one": "Omití {name}: leo como máximo {count} archivo por mensaje.",
        "other": "Omití {name}: leo como máximo {count} archivos por mensaje.",
    },
    T.MEDIA_TURN_TOTAL: "Omití {name}: los archivos de un mensaje pueden sumar como máximo {max}.",
    T.MEDIA_UNSUPPORTED: "{name}: no puedo leer este tipo de archivo; solo pasé su nombre.",
    T.MEDIA_NO_VISION: "{name}: este asistente no puede ver imágenes.",
    T.MEDIA_CORRUPT: "No pude abrir {name} (está dañado o no es lo que dice ser).",
    T.MEDIA_NO_TEXT: "{name} no contiene texto (¿un escaneo?); solo pasé su nombre.",
    T.MEDIA_DOWNLOAD_FAILED: "No pude descargar {name}; vuelve a enviarlo, por favor.",
    T.MEDIA_TRANSCRIPTION_FAILED: (
        "{name}: no pude transcribir el mensaje de voz; escríbelo o inténtalo de nuevo."
    ),
    T.MEDIA_DISABLED: "{name}: este asistente no lee archivos.",
    T.MEDIA_HEARD: "Escuché: {text}",
    T.MEDIA_NAME_IMAGE: "foto",
    T.MEDIA_NAME_VOICE: "mensaje de voz",
    T.MEDIA_NAME_AUDIO: "audio",
    T.MEDIA_NAME_VIDEO: "vídeo",
    T.MEDIA_NAME_DOCUMENT: "documento",
    T.MEDIA_NAME_STICKER: "sticker",
    T.FILE_TOO_LARGE: "📎 No pude adjuntar {name}: supera el límite de {max}.",
    T.FILE_NOT_ATTACHED: "📎 No pude adjuntar {name}.",
    T.FILE_GONE: "📎 {name} ya no está disponible.",
    T.FILE_SENT: "📎 {name}: enviado.",
    T.FILE_DECLINED: "📎 {name}: rechazado, no enviado.",
    T.TAKEOVER_PAUSED: (
        "Bot en pausa en este chat: ahora responde una persona. Envía {on} para reactivarlo."
    ),
    T.TAKEOVER_PAUSED_FOR: (
        "Bot en pausa en este chat: ahora responde una persona. Se reactiva en {wait}, "
        "o envía {on}."
    ),
    T.TAKEOVER_RESUMED: "El bot vuelve a estar activo en este chat.",
    T.APPROVAL_PROMPT: (
        "🔐 El asistente quiere usar {tool} con {arguments}\n¿Lo permites? (caduca en {expires})"
    ),
    T.APPROVAL_REPLY_HINT: "Responde sí o no.",
    T.APPROVAL_TAINTED: "⚠️ Se pregunta porque la conversación contiene contenido no fiable ({sources}).",
    T.APPROVAL_APPROVE: "Aprobar",
    T.APPROVAL_DENY: "Rechazar",
    T.APPROVAL_APPROVED: "✅ {tool}: aprobado por {name}.",
    T.APPROVAL_DENIED: "❌ {tool}: rechazado por {name}.",
    T.APPROVAL_TIMED_OUT: "⌛ {tool}: sin respuesta en {wait}, así que no se ejecutó.",
    T.APPROVAL_CANCELLED: "✖️ {tool}: ya no hace falta.",
    T.APPROVAL_NOT_YOURS: "Solo la persona que lo pidió puede responder a esto.",
    T.TOOL_PROGRESS: "usando {tools}…",
}

# Status, empty answers, menus and delivery notes (a dict: one form per plural category).
TEXTS.update(
    {
        T.HELP_JOBS: "tus mensajes programados",
        T.STATUS_UP: "Estoy en marcha.",
        T.STATUS_AGENT: "Asistente: {assistant}",
        T.STATUS_AGENT_MODEL: "Asistente: {assistant} ({model})",
        T.STATUS_HISTORY: {
            "one": "Esta conversación: {count} mensaje en contexto",
            "other": "Esta conversación: {count} mensajes en contexto",
        },
        T.STATUS_WORKING: "Estoy trabajando en tu mensaje.",
        T.STATUS_WORKING_QUEUED: {
            "one": "Estoy trabajando en tu mensaje; {count} más en espera.",
            "other": "Estoy trabajando en tu mensaje; {count} más en espera.",
        },
        T.EMPTY_REPLY: (
            "No tengo una respuesta para eso. "
            "Prueba a reformular tu mensaje o a añadir algo más de detalle."
        ),
        T.MENU_CHOOSE: "Elige una opción:",
        T.MENU_OPEN_LIST: "Elegir…",
        T.DEGRADE_NOTE: "(Nota: {items}.)",
        T.DEGRADE_LABELS_SHORTENED: {
            "one": "{count} etiqueta acortada",
            "other": "{count} etiquetas acortadas",
        },
        T.DEGRADE_MENUS_AS_TEXT: {
            "one": "{count} menú mostrado como texto",
            "other": "{count} menús mostrados como texto",
        },
        T.DEGRADE_BUTTON_VALUES_SHORTENED: {
            "one": "{count} valor de botón acortado",
            "other": "{count} valores de botón acortados",
        },
        T.DEGRADE_OPTION_VALUES_SHORTENED: {
            "one": "{count} valor de opción acortado",
            "other": "{count} valores de opción acortados",
        },
        T.DEGRADE_BUTTONS_DROPPED: {
            "one": "{count} botón omitido",
            "other": "{count} botones omitidos",
        },
        T.DEGRADE_OPTIONS_DROPPED: {
            "one": "{count} opción omitida",
            "other": "{count} opciones omitidas",
        },
        T.DEGRADE_OPTIONS_REPEATED: {
            "one": "{count} opción con un valor repetido omitida",
            "other": "{count} opciones con un valor repetido omitidas",
        },
        T.DEGRADE_FORMATTING_PLAIN: "formato mostrado como texto sin formato",
        T.DEGRADE_BUTTONS_AS_TEXT: {
            "one": "{count} botón mostrado como texto",
            "other": "{count} botones mostrados como texto",
        },
        T.DEGRADE_LINK_BUTTONS_AS_TEXT: {
            "one": "{count} botón de enlace mostrado como texto",
            "other": "{count} botones de enlace mostrados como texto",
        },
        T.DEGRADE_BUTTONS_AS_LIST: {
            "one": "{count} botón mostrado como lista",
            "other": "{count} botones mostrados como lista",
        },
        T.DEGRADE_SELECTS_AS_BUTTONS: {
            "one": "{count} menú de selección mostrado como botones",
            "other": "{count} menús de selección mostrados como botones",
        },
        T.DEGRADE_SELECTS_AS_TEXT: {
            "one": "{count} menú de selección mostrado como texto",
            "other": "{count} menús de selección mostrados como texto",
        },
        T.DEGRADE_TABLE_ROWS: {
            "one": "tabla recortada a {kept} de {count} fila",
            "other": "tabla recortada a {kept} de {count} filas",
        },
        T.DEGRADE_TABLE_COLUMNS: {
            "one": "tabla recortada a {kept} de {count} columna",
            "other": "tabla recortada a {kept} de {count} columnas",
        },
        T.DEGRADE_TABLES_AS_TEXT: {
            "one": "{count} tabla mostrada como texto",
            "other": "{count} tablas mostradas como texto",
        },
        T.DEGRADE_CHARTS_AS_TEXT: {
            "one": "{count} gráfico mostrado como texto",
            "other": "{count} gráficos mostrados como texto",
        },
        T.DEGRADE_IMAGES_AS_LINKS: {
            "one": "{count} imagen enviada como enlace",
            "other": "{count} imágenes enviadas como enlaces",
        },
        T.DEGRADE_FILES_UNSUPPORTED: {
            "one": "{count} archivo no adjuntado (este chat no admite archivos)",
            "other": "{count} archivos no adjuntados (este chat no admite archivos)",
        },
        T.DEGRADE_FILES_TOO_LARGE: {
            "one": "{count} archivo por encima del límite de tamaño no adjuntado",
            "other": "{count} archivos por encima del límite de tamaño no adjuntados",
        },
        T.DEGRADE_FILES_AS_DOCUMENTS: {
            "one": "{count} archivo enviado como documento",
            "other": "{count} archivos enviados como documentos",
        },
        T.DEGRADE_VOICE_AS_AUDIO: {
            "one": "{count} nota de voz enviada como audio",
            "other": "{count} notas de voz enviadas como audio",
        },
        T.DEGRADE_IMAGES_AS_FILES: {
            "one": "{count} imagen enviada como archivo",
            "other": "{count} imágenes enviadas como archivos",
        },
        T.DEGRADE_CAPTIONS_AS_TEXT: {
            "one": "{count} pie de foto enviado como texto",
            "other": "{count} pies de foto enviados como texto",
        },
    }
)

# /jobs in chat.
TEXTS.update(
    {
        T.JOBS_NONE: "No tienes tareas programadas.",
        T.JOBS_TITLE: "Tus tareas programadas:",
        T.JOBS_LINE: "• {id}: {schedule}, {when}",
        T.JOBS_NEXT: "próxima {time}",
        T.JOBS_NOT_SCHEDULED: "sin programar",
        T.JOBS_PAUSED: "(en pausa)",
        T.JOBS_REMOVE_HINT: "Elimina una con {command}.",
        T.JOBS_REMOVED: "Eliminé {id}.",
        T.JOBS_UNKNOWN: "No tienes ninguna tarea llamada {id}.",
    }
)

# What a renderer could not fit (one form per plural category).
TEXTS.update(
    {
        T.RENDER_OPTIONS_HIDDEN: {
            "one": "{count} opción más no mostrada",
            "other": "{count} opciones más no mostradas",
        },
        T.RENDER_ROWS_HIDDEN: {
            "one": "{count} fila más no mostrada",
            "other": "{count} filas más no mostradas",
        },
        T.RENDER_COLUMNS_HIDDEN: {
            "one": "{count} columna más no mostrada",
            "other": "{count} columnas más no mostradas",
        },
    }
)

# Spend budgets: the refusal, the one warning per period, /usage.
TEXTS.update(
    {
        T.BUDGET_REFUSED: (
            "Has agotado tu cupo por ahora, así que no puedo responder a esto."
            " Se renueva en {wait}."
        ),
        T.BUDGET_WARN: "Aviso: has usado {share} de tu cupo de este periodo. Se renueva en {wait}.",
        T.USAGE_TITLE: "Tu uso en este periodo:",
        T.USAGE_LINE: "• {rule}: {used} de {limit} ({share}), se renueva en {wait}",
        T.USAGE_NONE: "Aquí no se te aplica ningún límite de gasto.",
    }
)
