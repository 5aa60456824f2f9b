"""Spanish texts."""

from __future__ import annotations

from chatgate.texts.ids import TextId as T

TEXTS: dict[T, str] = {
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
    T.MEDIA_TOO_LARGE: (
        "{name} supera {max}, el máximo que acepta este bot; envía un archivo más pequeño."
    ),
    T.MEDIA_TOO_LARGE_TELEGRAM: (
        "{name} supera {max}, el máximo que acepta este bot (Telegram solo deja a los "
        "bots descargar archivos de hasta 20 MB); envía un archivo más pequeño."
    ),
    T.MEDIA_TOO_LONG: "{name} dura más de {duration}, lo máximo que transcribe este bot.",
    T.MEDIA_TOO_MANY: "Omití {name}: leo como máximo {count} archivos por mensaje.",
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
    T.TOOL_PROGRESS: "usando {tools}…",
}
