"""German texts."""

from __future__ import annotations

from chatgate.model.text_ids import Template
from chatgate.model.text_ids import TextId as T

TEXTS: dict[T, Template] = {
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
    T.FAILURE_TOOL_LIMIT: (
        "Dafür wären mehr Schritte nötig, als ich für eine Nachricht machen kann, deshalb habe "
        "ich abgebrochen. Bitte teile deine Anfrage in kleinere Teile auf."
    ),
    T.FAILURE_TOOL_TIMEOUT: (
        "Ein Werkzeug, das ich benutzt habe, hat zu lange gebraucht, deshalb habe ich "
        "abgebrochen. Bitte versuche es in einer Minute noch einmal."
    ),
    T.FAILURE_TOOL_BUDGET: (
        "Dafür wäre mehr Arbeit nötig, als ich für eine Nachricht leisten kann, deshalb habe "
        "ich abgebrochen. Bitte frage nach weniger auf einmal."
    ),
    T.FAILURE_TOOL_FAILED: (
        "Ein Werkzeug, das ich benutzt habe, funktioniert gerade nicht, deshalb konnte ich "
        "nicht fertig werden. Bitte versuche es in einer Minute noch einmal."
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
    T.STATE_AWAY: (
        "Ich komme gerade nicht an mein Gedächtnis. Ich antworte, sobald es wieder da ist; "
        "du musst nichts erneut senden."
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
    T.MEDIA_TOO_MANY: {
        "one": "{name} wurde übersprungen: Pro Nachricht wird höchstens {count} Datei gelesen.",
        "other": "{name} wurde übersprungen: Pro Nachricht werden höchstens {count} Dateien gelesen.",
    },
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
    T.FILE_GONE: "📎 {name} ist nicht mehr verfügbar.",
    T.FILE_SENT: "📎 {name}: gesendet.",
    T.FILE_DECLINED: "📎 {name}: abgelehnt, nicht gesendet.",
    T.TAKEOVER_PAUSED: (
        "Bot in diesem Chat pausiert: Hier antwortet jetzt ein Mensch. "
        "Mit {on} schaltest du ihn wieder ein."
    ),
    T.TAKEOVER_PAUSED_FOR: (
        "Bot in diesem Chat pausiert: Hier antwortet jetzt ein Mensch. "
        "Er schaltet sich in {wait} wieder ein, oder sende {on}."
    ),
    T.TAKEOVER_RESUMED: "Bot in diesem Chat wieder eingeschaltet.",
    T.APPROVAL_PROMPT: (
        "🔐 Der Assistent möchte {tool} verwenden mit {arguments}\n"
        "Erlauben? (läuft ab in {expires})"
    ),
    T.APPROVAL_REPLY_HINT: "Antworte mit ja oder nein.",
    T.APPROVAL_TAINTED: "⚠️ Gefragt, weil das Gespräch nicht vertrauenswürdige Inhalte enthält ({sources}).",
    T.APPROVAL_APPROVE: "Erlauben",
    T.APPROVAL_DENY: "Ablehnen",
    T.APPROVAL_APPROVED: "✅ {tool}: erlaubt von {name}.",
    T.APPROVAL_DENIED: "❌ {tool}: abgelehnt von {name}.",
    T.APPROVAL_TIMED_OUT: "⌛ {tool}: keine Antwort innerhalb von {wait}, daher nicht ausgeführt.",
    T.APPROVAL_CANCELLED: "✖️ {tool}: nicht mehr nötig.",
    T.APPROVAL_NOT_YOURS: "Nur die Person, die gefragt hat, kann das beantworten.",
    T.TOOL_PROGRESS: "verwende {tools}…",
}

# Status, empty answers, menus and delivery notes (a dict: one form per plural category).
TEXTS.update(
    {
        T.HELP_JOBS: "deine geplanten Nachrichten",
        T.STATUS_UP: "Ich bin bereit.",
        T.STATUS_AGENT: "Assistent: {assistant}",
        T.STATUS_AGENT_MODEL: "Assistent: {assistant} ({model})",
        T.STATUS_HISTORY: {
            "one": "Dieses Gespräch: {count} Nachricht im Kontext",
            "other": "Dieses Gespräch: {count} Nachrichten im Kontext",
        },
        T.STATUS_WORKING: "Ich arbeite gerade an deiner Nachricht.",
        T.STATUS_WORKING_QUEUED: {
            "one": "Ich arbeite gerade an deiner Nachricht, {count} weitere wartet.",
            "other": "Ich arbeite gerade an deiner Nachricht, {count} weitere warten.",
        },
        T.EMPTY_REPLY: (
            "Darauf habe ich keine Antwort – "
            "formuliere deine Nachricht bitte um oder gib etwas mehr Details an."
        ),
        T.MENU_CHOOSE: "Wähle eine Option:",
        T.MENU_OPEN_LIST: "Auswählen…",
        T.DEGRADE_NOTE: "(Hinweis: {items}.)",
        T.DEGRADE_LABELS_SHORTENED: {
            "one": "{count} Beschriftung gekürzt",
            "other": "{count} Beschriftungen gekürzt",
        },
        T.DEGRADE_MENUS_AS_TEXT: {
            "one": "{count} Menü als Text dargestellt",
            "other": "{count} Menüs als Text dargestellt",
        },
        T.DEGRADE_BUTTON_VALUES_SHORTENED: {
            "one": "{count} Schaltflächenwert gekürzt",
            "other": "{count} Schaltflächenwerte gekürzt",
        },
        T.DEGRADE_OPTION_VALUES_SHORTENED: {
            "one": "{count} Optionswert gekürzt",
            "other": "{count} Optionswerte gekürzt",
        },
        T.DEGRADE_BUTTONS_DROPPED: {
            "one": "{count} Schaltfläche weggelassen",
            "other": "{count} Schaltflächen weggelassen",
        },
        T.DEGRADE_OPTIONS_DROPPED: {
            "one": "{count} Option weggelassen",
            "other": "{count} Optionen weggelassen",
        },
        T.DEGRADE_OPTIONS_REPEATED: {
            "one": "{count} Option mit doppeltem Wert weggelassen",
            "other": "{count} Optionen mit doppeltem Wert weggelassen",
        },
        T.DEGRADE_FORMATTING_PLAIN: "Formatierung als reiner Text angezeigt",
        T.DEGRADE_BUTTONS_AS_TEXT: {
            "one": "{count} Schaltfläche als Text dargestellt",
            "other": "{count} Schaltflächen als Text dargestellt",
        },
        T.DEGRADE_LINK_BUTTONS_AS_TEXT: {
            "one": "{count} Link-Schaltfläche als Text dargestellt",
            "other": "{count} Link-Schaltflächen als Text dargestellt",
        },
        T.DEGRADE_BUTTONS_AS_LIST: {
            "one": "{count} Schaltfläche als Liste angezeigt",
            "other": "{count} Schaltflächen als Liste angezeigt",
        },
        T.DEGRADE_SELECTS_AS_BUTTONS: {
            "one": "{count} Auswahlmenü als Schaltflächen dargestellt",
            "other": "{count} Auswahlmenüs als Schaltflächen dargestellt",
        },
        T.DEGRADE_SELECTS_AS_TEXT: {
            "one": "{count} Auswahlmenü als Text dargestellt",
            "other": "{count} Auswahlmenüs als Text dargestellt",
        },
        T.DEGRADE_TABLE_ROWS: {
            "one": "Tabelle auf {kept} von {count} Zeile gekürzt",
            "other": "Tabelle auf {kept} von {count} Zeilen gekürzt",
        },
        T.DEGRADE_TABLE_COLUMNS: {
            "one": "Tabelle auf {kept} von {count} Spalte gekürzt",
            "other": "Tabelle auf {kept} von {count} Spalten gekürzt",
        },
        T.DEGRADE_TABLES_AS_TEXT: {
            "one": "{count} Tabelle als Text dargestellt",
            "other": "{count} Tabellen als Text dargestellt",
        },
        T.DEGRADE_CHARTS_AS_TEXT: {
            "one": "{count} Diagramm als Text dargestellt",
            "other": "{count} Diagramme als Text dargestellt",
        },
        T.DEGRADE_IMAGES_AS_LINKS: {
            "one": "{count} Bild als Link gesendet",
            "other": "{count} Bilder als Links gesendet",
        },
        T.DEGRADE_FILES_UNSUPPORTED: {
            "one": "{count} Datei nicht angehängt (dieser Chat nimmt keine Dateien an)",
            "other": "{count} Dateien nicht angehängt (dieser Chat nimmt keine Dateien an)",
        },
        T.DEGRADE_FILES_TOO_LARGE: {
            "one": "{count} Datei über der Größengrenze nicht angehängt",
            "other": "{count} Dateien über der Größengrenze nicht angehängt",
        },
        T.DEGRADE_FILES_AS_DOCUMENTS: {
            "one": "{count} Datei als Dokument gesendet",
            "other": "{count} Dateien als Dokumente gesendet",
        },
        T.DEGRADE_VOICE_AS_AUDIO: {
            "one": "{count} Sprachnachricht als Audio gesendet",
            "other": "{count} Sprachnachrichten als Audio gesendet",
        },
        T.DEGRADE_IMAGES_AS_FILES: {
            "one": "{count} Bild als Datei gesendet",
            "other": "{count} Bilder als Dateien gesendet",
        },
        T.DEGRADE_CAPTIONS_AS_TEXT: {
            "one": "{count} Bildunterschrift als Text gesendet",
            "other": "{count} Bildunterschriften als Text gesendet",
        },
    }
)

# /jobs in chat.
TEXTS.update(
    {
        T.JOBS_NONE: "Du hast keine geplanten Aufträge.",
        T.JOBS_TITLE: "Deine geplanten Aufträge:",
        T.JOBS_LINE: "• {id}: {schedule}, {when}",
        T.JOBS_NEXT: "nächster Lauf {time}",
        T.JOBS_NOT_SCHEDULED: "nicht geplant",
        T.JOBS_PAUSED: "(pausiert)",
        T.JOBS_REMOVE_HINT: "Entferne einen mit {command}.",
        T.JOBS_REMOVED: "{id} entfernt.",
        T.JOBS_UNKNOWN: "Du hast keinen Auftrag namens {id}.",
    }
)

# What a renderer could not fit (one form per plural category).
TEXTS.update(
    {
        T.RENDER_OPTIONS_HIDDEN: {
            "one": "{count} weitere Option nicht angezeigt",
            "other": "{count} weitere Optionen nicht angezeigt",
        },
        T.RENDER_ROWS_HIDDEN: {
            "one": "{count} weitere Zeile nicht angezeigt",
            "other": "{count} weitere Zeilen nicht angezeigt",
        },
        T.RENDER_COLUMNS_HIDDEN: {
            "one": "{count} weitere Spalte nicht angezeigt",
            "other": "{count} weitere Spalten nicht angezeigt",
        },
    }
)

# Spend budgets: the refusal, the one warning per period, /usage.
TEXTS.update(
    {
        T.BUDGET_REFUSED: (
            "Dein Kontingent ist vorerst aufgebraucht, deshalb kann ich darauf nicht antworten."
            " Es erneuert sich in {wait}."
        ),
        T.BUDGET_WARN: (
            "Hinweis: Du hast {share} deines Kontingents für diesen Zeitraum verbraucht."
            " Es erneuert sich in {wait}."
        ),
        T.USAGE_TITLE: "Dein Verbrauch in diesem Zeitraum:",
        T.USAGE_LINE: "• {rule}: {used} von {limit} ({share}), erneuert sich in {wait}",
        T.USAGE_NONE: "Hier gelten für dich keine Ausgabengrenzen.",
    }
)
