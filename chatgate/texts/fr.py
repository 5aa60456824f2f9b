"""French texts."""

from __future__ import annotations

from chatgate.texts.ids import TextId as T

TEXTS: dict[T, str] = {
    T.FAILURE_SETUP: (
        "Désolé, je ne peux pas répondre pour le moment à cause d'un problème de mon côté. "
        "Veuillez réessayer plus tard."
    ),
    T.FAILURE_BUSY: (
        "Je reçois plus de demandes que je ne peux en traiter. Veuillez réessayer dans une minute."
    ),
    T.FAILURE_BUSY_WAIT: (
        "Je reçois plus de demandes que je ne peux en traiter. Veuillez réessayer dans {wait}."
    ),
    T.FAILURE_TOO_LONG: (
        "Cette conversation est devenue trop longue pour moi. "
        "Envoyez {new} pour en commencer une nouvelle, ou envoyez un message plus court."
    ),
    T.FAILURE_TIMEOUT: (
        "Cela m'a pris trop de temps, alors je me suis arrêté. "
        "Renvoyez votre demande ou découpez-la en parties plus petites."
    ),
    T.FAILURE_CANCELLED: "La demande a été annulée.",
    T.FAILURE_INVALID: ("Je n'ai pas pu traiter cette demande. Reformulez-la et réessayez."),
    T.FAILURE_UNAVAILABLE: (
        "Je ne peux pas répondre pour le moment car un service dont je dépends est en panne. "
        "Veuillez réessayer dans quelques minutes."
    ),
    T.FAILURE_UNAVAILABLE_WAIT: (
        "Je ne peux pas répondre pour le moment car un service dont je dépends est en panne. "
        "Veuillez réessayer dans {wait}."
    ),
    T.FAILURE_OVERLOADED_HERE: (
        "Je suis occupé pour le moment, renvoyez votre message dans une minute."
    ),
    T.FAILURE_UNKNOWN: (
        "Un problème est survenu pendant la réponse. Veuillez renvoyer votre message."
    ),
    T.HELP_TITLE: "Commandes :",
    T.HELP_NEW: "commencer une nouvelle conversation",
    T.HELP_STOP: "annuler la réponse en cours",
    T.HELP_STATUS: "ce que je fais en ce moment",
    T.HELP_HELP: "cette liste",
    T.STOPPED: "Arrêté.",
    T.NOTHING_TO_STOP: "Rien à arrêter — je ne travaille sur rien pour vous en ce moment.",
    T.NEW_SESSION: (
        "Nouvelle conversation commencée. Les messages précédents ne font plus partie du contexte."
    ),
    T.QUEUE_FULL: (
        "Je traite encore vos messages précédents, j'ai donc ignoré celui-ci. "
        "Attendez ma réponse, puis renvoyez-le."
    ),
    T.RATE_LIMITED: (
        "Vous envoyez des messages plus vite que je ne peux répondre, j'ai donc ignoré celui-ci. "
        "Attendez {wait} et renvoyez-le."
    ),
    T.PAIRING_PROMPT: (
        "{hello} Je ne vous connais pas encore, je ne peux donc pas répondre. Pour obtenir "
        "l'accès, envoyez ce code à la personne qui gère ce bot :\n\n{code}\n\n"
        "Le code expire dans {expires}."
    ),
    T.PAIRING_HELLO: "Bonjour {name} !",
    T.PAIRING_HELLO_ANONYMOUS: "Bonjour !",
    T.PAIRING_FULL: (
        "Je ne peux pas accepter de nouvelles demandes d'accès pour le moment. "
        "Veuillez réessayer dans une heure."
    ),
    T.PAIRING_APPROVED: "Vous avez maintenant accès. Renvoyez votre message et je répondrai.",
    T.STALE_NOTICE: (
        "J'étais hors ligne quand vous avez écrit ceci. Renvoyez-le s'il est toujours d'actualité."
    ),
    T.MEDIA_TOO_LARGE: (
        "{name} dépasse {max}, le maximum accepté par ce bot ; envoyez un fichier plus petit."
    ),
    T.MEDIA_TOO_LARGE_TELEGRAM: (
        "{name} dépasse {max}, le maximum accepté par ce bot (Telegram ne laisse les bots "
        "télécharger que des fichiers de 20 Mo au plus) ; envoyez un fichier plus petit."
    ),
    T.MEDIA_TOO_LONG: "{name} dure plus de {duration}, le maximum que ce bot transcrit.",
    T.MEDIA_TOO_MANY: "{name} : non lu ; au plus {count} fichiers sont lus par message.",
    T.MEDIA_TURN_TOTAL: (
        "{name} : non lu ; les fichiers d'un même message ne peuvent dépasser {max} au total."
    ),
    T.MEDIA_UNSUPPORTED: (
        "{name} : ce type de fichier ne peut pas être lu ; seul son nom a été transmis."
    ),
    T.MEDIA_NO_VISION: "{name} : cet assistant ne peut pas voir les images.",
    T.MEDIA_CORRUPT: (
        "Impossible d'ouvrir {name} (fichier endommagé ou d'un autre type que celui annoncé)."
    ),
    T.MEDIA_NO_TEXT: "{name} ne contient pas de texte (un scan ?) ; seul son nom a été transmis.",
    T.MEDIA_DOWNLOAD_FAILED: "Impossible de télécharger {name} ; veuillez l'envoyer à nouveau.",
    T.MEDIA_TRANSCRIPTION_FAILED: (
        "{name} : le message vocal n'a pas pu être transcrit ; écrivez-le ou réessayez."
    ),
    T.MEDIA_DISABLED: "{name} : cet assistant ne lit pas les fichiers.",
    T.MEDIA_HEARD: "Entendu : {text}",
    T.MEDIA_NAME_IMAGE: "photo",
    T.MEDIA_NAME_VOICE: "message vocal",
    T.MEDIA_NAME_AUDIO: "audio",
    T.MEDIA_NAME_VIDEO: "vidéo",
    T.MEDIA_NAME_DOCUMENT: "document",
    T.MEDIA_NAME_STICKER: "autocollant",
    T.FILE_TOO_LARGE: "📎 Impossible de joindre {name} : le fichier dépasse la limite de {max}.",
    T.FILE_NOT_ATTACHED: "📎 Impossible de joindre {name}.",
    T.TOOL_PROGRESS: "j'utilise {tools}…",
}
