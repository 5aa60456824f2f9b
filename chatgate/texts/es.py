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
    T.STALE_NOTICE: "Estaba desconectado cuando escribiste esto. Vuelve a enviarlo si todavía es relevante.",
}
