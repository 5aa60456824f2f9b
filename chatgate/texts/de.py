"""German texts."""

from __future__ import annotations

from chatgate.texts.ids import TextId as T

TEXTS: dict[T, str] = {
    T.FAILURE_SETUP: (
        "Entschuldigung, ich kann gerade wegen eines Problems auf meiner Seite nicht antworten. "
        "Bitte versuche es später noch einmal."
    ),
    T.FAILURE_BUSY: (
        "Ich bekomme gerade mehr Anfragen, als ich bearbeiten kann. "
        "Bitte versuche es in einer Minute noch einmal."
    ),
    T.FAILURE_BUSY_WAIT: (
        "Ich bekomme gerade mehr Anfragen, als ich bearbeiten kann. "
        "Bitte versuche es in {wait} noch einmal."
    ),
    T.FAILURE_TIMEOUT: (
        "Das hat zu lange gedauert, deshalb habe ich abgebrochen. "
        "Bitte sende es noch einmal oder teile deine Anfrage in kleinere Teile auf."
    ),
    T.FAILURE_TOO_LONG: (
        "Diese Unterhaltung ist zu lang für mich geworden. "
        "Sende {new}, um neu anzufangen, oder schicke eine kürzere Nachricht."
    ),
    T.FAILURE_CANCELLED: "Die Anfrage wurde abgebrochen.",
    T.FAILURE_INVALID: (
        "Ich konnte diese Anfrage nicht verarbeiten. Bitte formuliere sie um und versuche es "
        "noch einmal."
    ),
    T.FAILURE_UNAVAILABLE: (
        "Ich kann gerade nicht antworten, weil ein Dienst, den ich brauche, ausgefallen ist. "
        "Bitte versuche es in ein paar Minuten noch einmal."
    ),
    T.FAILURE_UNAVAILABLE_WAIT: (
        "Ich kann gerade nicht antworten, weil ein Dienst, den ich brauche, ausgefallen ist. "
        "Bitte versuche es in {wait} noch einmal."
    ),
    T.FAILURE_OVERLOADED_HERE: (
        "Ich bin gerade ausgelastet, bitte sende es in einer Minute noch einmal."
    ),
    T.FAILURE_UNKNOWN: (
        "Beim Antworten ist etwas schiefgegangen. Bitte sende deine Nachricht noch einmal."
    ),
    T.HELP_TITLE: "Befehle:",
    T.HELP_NEW: "eine neue Unterhaltung beginnen",
    T.HELP_STOP: "die laufende Antwort abbrechen",
    T.HELP_STATUS: "was ich gerade tue",
    T.HELP_HELP: "diese Liste",
    T.STOPPED: "Abgebrochen.",
    T.NOTHING_TO_STOP: "Nichts abzubrechen — ich arbeite gerade an nichts für dich.",
    T.NEW_SESSION: (
        "Neue Unterhaltung begonnen. Frühere Nachrichten gehören nicht mehr zum Kontext."
    ),
    T.QUEUE_FULL: (
        "Ich arbeite noch an deinen vorherigen Nachrichten, deshalb habe ich diese übersprungen. "
        "Bitte warte auf meine Antwort und sende sie dann noch einmal."
    ),
    T.RATE_LIMITED: (
        "Du schickst Nachrichten schneller, als ich antworten kann, deshalb habe ich diese "
        "übersprungen. Bitte warte {wait} und sende sie noch einmal."
    ),
    T.PAIRING_PROMPT: (
        "{hello} Ich kenne dich noch nicht, deshalb kann ich nicht antworten. Um Zugang zu "
        "bekommen, schicke diesen Code an die Person, die diesen Bot betreibt:\n\n{code}\n\n"
        "Der Code läuft in {expires} ab."
    ),
    T.PAIRING_HELLO: "Hallo {name}!",
    T.PAIRING_HELLO_ANONYMOUS: "Hallo!",
    T.PAIRING_FULL: (
        "Ich kann gerade keine neuen Zugangsanfragen annehmen. "
        "Bitte versuche es in einer Stunde noch einmal."
    ),
    T.PAIRING_APPROVED: (
        "Du hast jetzt Zugang. Sende deine Nachricht noch einmal, dann antworte ich."
    ),
    T.STALE_NOTICE: (
        "Ich war offline, als du das geschrieben hast. "
        "Bitte sende es noch einmal, falls es noch aktuell ist."
    ),
    T.MEDIA_TOO_LARGE: (
        "{name} ist größer als {max}, das Maximum für diesen Bot; bitte schicke eine "
        "kleinere Datei."
    ),
    T.MEDIA_TOO_LARGE_TELEGRAM: (
        "{name} ist größer als {max}, das Maximum für diesen Bot (Telegram lässt Bots nur "
        "Dateien bis 20 MB herunterladen); bitte schicke eine kleinere Datei."
    ),
    T.MEDIA_TOO_LONG: (
        "{name} ist länger als {duration}; längere Aufnahmen schreibt dieser Bot nicht ab."
    ),
    T.MEDIA_TOO_MANY: (
        "{name} wurde übersprungen: Pro Nachricht werden höchstens {count} Dateien gelesen."
    ),
    T.MEDIA_TURN_TOTAL: (
        "{name} wurde übersprungen: Die Dateien einer Nachricht dürfen zusammen höchstens "
        "{max} groß sein."
    ),
    T.MEDIA_UNSUPPORTED: (
        "{name}: Diesen Dateityp kann ich nicht lesen; nur der Name wurde weitergegeben."
    ),
    T.MEDIA_NO_VISION: "{name}: Dieser Assistent kann keine Bilder sehen.",
    T.MEDIA_CORRUPT: (
        "{name} ließ sich nicht öffnen (beschädigt oder nicht das, was die Datei vorgibt zu sein)."
    ),
    T.MEDIA_NO_TEXT: "{name} enthält keinen Text (ein Scan?); nur der Name wurde weitergegeben.",
    T.MEDIA_DOWNLOAD_FAILED: (
        "{name} konnte nicht heruntergeladen werden; bitte schicke die Datei noch einmal."
    ),
    T.MEDIA_TRANSCRIPTION_FAILED: (
        "{name}: Die Sprachnachricht konnte nicht abgeschrieben werden; bitte tippe sie "
        "oder versuche es noch einmal."
    ),
    T.MEDIA_DISABLED: "{name}: Dieser Assistent liest keine Dateien.",
    T.MEDIA_HEARD: "Gehört: {text}",
    T.MEDIA_NAME_IMAGE: "Foto",
    T.MEDIA_NAME_VOICE: "Sprachnachricht",
    T.MEDIA_NAME_AUDIO: "Audio",
    T.MEDIA_NAME_VIDEO: "Video",
    T.MEDIA_NAME_DOCUMENT: "Dokument",
    T.MEDIA_NAME_STICKER: "Sticker",
    T.FILE_TOO_LARGE: "📎 {name} konnte nicht angehängt werden: Die Datei ist größer als {max}.",
    T.FILE_NOT_ATTACHED: "📎 {name} konnte nicht angehängt werden.",
    T.TOOL_PROGRESS: "verwende {tools}…",
}
