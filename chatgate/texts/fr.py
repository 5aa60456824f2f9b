"""French texts."""

from __future__ import annotations

from chatgate.model.text_ids import Template
from chatgate.model.text_ids import TextId as T

TEXTS: dict[T, Template] = {
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
    T.FAILURE_TOOL_LIMIT: (
        "Il fallait plus d'étapes que je ne peux en faire pour un message, alors je me suis "
        "arrêté. Découpez votre demande en parties plus petites."
    ),
    T.FAILURE_TOOL_TIMEOUT: (
        "Un outil que j'utilisais a mis trop de temps à répondre, alors je me suis arrêté. "
        "Réessayez dans une minute."
    ),
    T.FAILURE_TOOL_BUDGET: (
        "Il fallait plus de travail que je ne peux en faire pour un message, alors je me suis "
        "arrêté. Demandez moins de choses à la fois."
    ),
    T.FAILURE_TOOL_FAILED: (
        "Un outil que j'utilisais a cessé de fonctionner, je n'ai donc pas pu terminer. "
        "Réessayez dans une minute."
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
    T.STATE_AWAY: (
        "Je n'ai pas accès à ma mémoire pour le moment. Je répondrai dès qu'elle sera de retour ; "
        "inutile de renvoyer le message."
    ),
    T.MEDIA_TOO_LARGE: (
        "{name} dépasse {max}, le maximum accepté par ce bot ; envoyez un fichier plus petit."
    ),
    T.MEDIA_TOO_LARGE_TELEGRAM: (
        "{name} dépasse {max}, le maximum accepté par ce bot (Telegram ne laisse les bots "
        "télécharger que des fichiers de 20 Mo au plus) ; envoyez un fichier plus petit."
    ),
    T.MEDIA_TOO_LONG: "{name} dure plus de {duration}, le maximum que ce bot transcrit.",
    T.MEDIA_TOO_MANY: {
        "one": "{name} : non lu ; au plus {count} fichier est lu par message.",
        "other": "{name} : non lu ; au plus {count} fichiers sont lus par message.",
    },
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
    T.FILE_GONE: "📎 {name} n'est plus disponible.",
    T.FILE_SENT: "📎 {name} : envoyé.",
    T.FILE_DECLINED: "📎 {name} : refusé, non envoyé.",
    T.TAKEOVER_PAUSED: (
        "Bot en pause dans cette conversation : une personne répond ici désormais. "
        "Envoyez {on} pour le réactiver."
    ),
    T.TAKEOVER_PAUSED_FOR: (
        "Bot en pause dans cette conversation : une personne répond ici désormais. "
        "Il se réactive dans {wait}, ou envoyez {on}."
    ),
    T.TAKEOVER_RESUMED: "Le bot est de nouveau actif dans cette conversation.",
    T.APPROVAL_PROMPT: (
        "🔐 L'assistant veut utiliser {tool} avec {arguments}\n"
        "L'autoriser ? (expire dans {expires})"
    ),
    T.APPROVAL_REPLY_HINT: "Répondez oui ou non.",
    T.APPROVAL_TAINTED: "⚠️ Demandé car la conversation contient du contenu non fiable ({sources}).",
    T.APPROVAL_APPROVE: "Autoriser",
    T.APPROVAL_DENY: "Refuser",
    T.APPROVAL_APPROVED: "✅ {tool} : autorisé par {name}.",
    T.APPROVAL_DENIED: "❌ {tool} : refusé par {name}.",
    T.APPROVAL_TIMED_OUT: "⌛ {tool} : pas de réponse en {wait}, l'outil n'a donc pas été lancé.",
    T.APPROVAL_CANCELLED: "✖️ {tool} : plus nécessaire.",
    T.APPROVAL_NOT_YOURS: "Seule la personne qui a demandé peut répondre.",
    T.TOOL_PROGRESS: "j'utilise {tools}…",
}

# Status, empty answers, menus and delivery notes (a dict: one form per plural category).
TEXTS.update(
    {
        T.HELP_JOBS: "vos messages programmés",
        T.STATUS_UP: "Je suis opérationnel.",
        T.STATUS_AGENT: "Assistant : {assistant}",
        T.STATUS_AGENT_MODEL: "Assistant : {assistant} ({model})",
        T.STATUS_HISTORY: {
            "one": "Cette conversation : {count} message en contexte",
            "other": "Cette conversation : {count} messages en contexte",
        },
        T.STATUS_WORKING: "Je traite votre message.",
        T.STATUS_WORKING_QUEUED: {
            "one": "Je traite votre message ; {count} autre en attente.",
            "other": "Je traite votre message ; {count} autres en attente.",
        },
        T.EMPTY_REPLY: (
            "Je n'ai pas de réponse à cela. "
            "Essayez de reformuler votre message ou d'ajouter quelques détails."
        ),
        T.MENU_CHOOSE: "Choisissez une option :",
        T.MENU_OPEN_LIST: "Choisir…",
        T.DEGRADE_NOTE: "(Remarque : {items}.)",
        T.DEGRADE_LABELS_SHORTENED: {
            "one": "{count} libellé raccourci",
            "other": "{count} libellés raccourcis",
        },
        T.DEGRADE_MENUS_AS_TEXT: {
            "one": "{count} menu affiché en texte",
            "other": "{count} menus affichés en texte",
        },
        T.DEGRADE_BUTTON_VALUES_SHORTENED: {
            "one": "{count} valeur de bouton raccourcie",
            "other": "{count} valeurs de bouton raccourcies",
        },
        T.DEGRADE_OPTION_VALUES_SHORTENED: {
            "one": "{count} valeur d'option raccourcie",
            "other": "{count} valeurs d'option raccourcies",
        },
        T.DEGRADE_BUTTONS_DROPPED: {
            "one": "{count} bouton retiré",
            "other": "{count} boutons retirés",
        },
        T.DEGRADE_OPTIONS_DROPPED: {
            "one": "{count} option retirée",
            "other": "{count} options retirées",
        },
        T.DEGRADE_OPTIONS_REPEATED: {
            "one": "{count} option à valeur répétée retirée",
            "other": "{count} options à valeur répétée retirées",
        },
        T.DEGRADE_FORMATTING_PLAIN: "mise en forme affichée en texte brut",
        T.DEGRADE_BUTTONS_AS_TEXT: {
            "one": "{count} bouton affiché en texte",
            "other": "{count} boutons affichés en texte",
        },
        T.DEGRADE_LINK_BUTTONS_AS_TEXT: {
            "one": "{count} bouton de lien affiché en texte",
            "other": "{count} boutons de lien affichés en texte",
        },
        T.DEGRADE_BUTTONS_AS_LIST: {
            "one": "{count} bouton affiché en liste",
            "other": "{count} boutons affichés en liste",
        },
        T.DEGRADE_SELECTS_AS_BUTTONS: {
            "one": "{count} menu déroulant affiché en boutons",
            "other": "{count} menus déroulants affichés en boutons",
        },
        T.DEGRADE_SELECTS_AS_TEXT: {
            "one": "{count} menu déroulant affiché en texte",
            "other": "{count} menus déroulants affichés en texte",
        },
        T.DEGRADE_TABLE_ROWS: {
            "one": "tableau réduit à {kept} sur {count} ligne",
            "other": "tableau réduit à {kept} sur {count} lignes",
        },
        T.DEGRADE_TABLE_COLUMNS: {
            "one": "tableau réduit à {kept} sur {count} colonne",
            "other": "tableau réduit à {kept} sur {count} colonnes",
        },
        T.DEGRADE_TABLES_AS_TEXT: {
            "one": "{count} tableau affiché en texte",
            "other": "{count} tableaux affichés en texte",
        },
        T.DEGRADE_CHARTS_AS_TEXT: {
            "one": "{count} graphique affiché en texte",
            "other": "{count} graphiques affichés en texte",
        },
        T.DEGRADE_IMAGES_AS_LINKS: {
            "one": "{count} image envoyée sous forme de lien",
            "other": "{count} images envoyées sous forme de liens",
        },
        T.DEGRADE_FILES_UNSUPPORTED: {
            "one": "{count} fichier non joint (cette discussion n'accepte pas de fichiers)",
            "other": "{count} fichiers non joints (cette discussion n'accepte pas de fichiers)",
        },
        T.DEGRADE_FILES_TOO_LARGE: {
            "one": "{count} fichier trop volumineux non joint",
            "other": "{count} fichiers trop volumineux non joints",
        },
        T.DEGRADE_FILES_AS_DOCUMENTS: {
            "one": "{count} fichier envoyé comme document",
            "other": "{count} fichiers envoyés comme documents",
        },
        T.DEGRADE_VOICE_AS_AUDIO: {
            "one": "{count} message vocal envoyé en audio",
            "other": "{count} messages vocaux envoyés en audio",
        },
        T.DEGRADE_IMAGES_AS_FILES: {
            "one": "{count} image envoyée comme fichier",
            "other": "{count} images envoyées comme fichiers",
        },
        T.DEGRADE_CAPTIONS_AS_TEXT: {
            "one": "{count} légende envoyée en texte",
            "other": "{count} légendes envoyées en texte",
        },
    }
)

# /jobs in chat.
TEXTS.update(
    {
        T.JOBS_NONE: "Vous n'avez aucune tâche programmée.",
        T.JOBS_TITLE: "Vos tâches programmées :",
        T.JOBS_LINE: "• {id} : {schedule}, {when}",
        T.JOBS_NEXT: "prochaine {time}",
        T.JOBS_NOT_SCHEDULED: "non programmée",
        T.JOBS_PAUSED: "(en pause)",
        T.JOBS_REMOVE_HINT: "Supprimez-en une avec {command}.",
        T.JOBS_REMOVED: "{id} supprimée.",
        T.JOBS_UNKNOWN: "Vous n'avez aucune tâche nommée {id}.",
    }
)

# What a renderer could not fit (one form per plural category).
TEXTS.update(
    {
        T.RENDER_OPTIONS_HIDDEN: {
            "one": "{count} autre option non affichée",
            "other": "{count} autres options non affichées",
        },
        T.RENDER_ROWS_HIDDEN: {
            "one": "{count} autre ligne non affichée",
            "other": "{count} autres lignes non affichées",
        },
        T.RENDER_COLUMNS_HIDDEN: {
            "one": "{count} autre colonne non affichée",
            "other": "{count} autres colonnes non affichées",
        },
    }
)

# Spend budgets: the refusal, the one warning per period, /usage.
TEXTS.update(
    {
        T.BUDGET_REFUSED: (
            "Vous avez épuisé votre quota pour l'instant, je ne peux donc pas répondre."
            " Il se renouvelle dans {wait}."
        ),
        T.BUDGET_WARN: (
            "Attention : vous avez utilisé {share} de votre quota pour cette période."
            " Il se renouvelle dans {wait}."
        ),
        T.USAGE_TITLE: "Votre consommation sur cette période :",
        T.USAGE_LINE: "• {rule} : {used} sur {limit} ({share}), renouvelé dans {wait}",
        T.USAGE_NONE: "Aucune limite de dépense ne s'applique à vous ici.",
    }
)
