"""English texts (the reference language: every other language has the same ids)."""

from __future__ import annotations

from chatgate.texts.ids import TextId as T

TEXTS: dict[T, str] = {
    T.FAILURE_SETUP: (
        "Sorry, I can't answer right now because of a problem on my side. Please try again later."
    ),
    T.FAILURE_BUSY: (
        "I'm getting more requests than I can handle right now. Please try again in a minute."
    ),
    T.FAILURE_BUSY_WAIT: (
        "I'm getting more requests than I can handle right now. Please try again in {wait}."
    ),
    T.FAILURE_TIMEOUT: (
        "That took me too long, so I stopped. "
        "Please resend, or split your request into smaller parts."
    ),
    T.FAILURE_TOO_LONG: (
        "This conversation has grown too long for me. "
        "Send {new} to start a fresh one, or send a shorter message."
    ),
    T.FAILURE_CANCELLED: "That request was cancelled.",
    T.FAILURE_INVALID: "I couldn't process that request. Please rephrase it and try again.",
    T.FAILURE_UNAVAILABLE: (
        "I can't answer right now because a service I depend on is down. "
        "Please try again in a few minutes."
    ),
    T.FAILURE_UNAVAILABLE_WAIT: (
        "I can't answer right now because a service I depend on is down. "
        "Please try again in {wait}."
    ),
    T.FAILURE_OVERLOADED_HERE: "I'm busy right now, please resend in a minute.",
    T.FAILURE_UNKNOWN: "Something went wrong while answering. Please resend your message.",
    T.HELP_TITLE: "Commands:",
    T.HELP_NEW: "start a fresh conversation",
    T.HELP_STOP: "cancel the answer in progress",
    T.HELP_STATUS: "what I'm doing right now",
    T.HELP_HELP: "this list",
    T.STOPPED: "Stopped.",
    T.NOTHING_TO_STOP: "Nothing to stop — I'm not working on anything for you right now.",
    T.NEW_SESSION: (
        "Started a new conversation. Earlier messages are no longer part of the context."
    ),
    T.QUEUE_FULL: (
        "I'm still working on your earlier messages, so I skipped this one. "
        "Please wait for my answer, then resend."
    ),
    T.RATE_LIMITED: (
        "You're sending messages faster than I can answer, so I skipped this one. "
        "Please wait {wait} and resend."
    ),
    T.PAIRING_PROMPT: (
        "{hello} I don't know you yet, so I can't answer. To get access, send this code to the "
        "person who runs this bot:\n\n{code}\n\nThe code expires in {expires}."
    ),
    T.PAIRING_HELLO: "Hi {name}!",
    T.PAIRING_HELLO_ANONYMOUS: "Hi!",
    T.PAIRING_FULL: "I can't take new access requests right now. Please try again in an hour.",
    T.PAIRING_APPROVED: "You now have access. Send your message again and I'll answer.",
    T.STALE_NOTICE: "I was offline when you wrote this. Please resend it if it's still relevant.",
    T.MEDIA_TOO_LARGE: (
        "{name} is larger than {max}, the most this bot accepts; send a smaller file."
    ),
    T.MEDIA_TOO_LARGE_TELEGRAM: (
        "{name} is larger than {max}, the most this bot accepts (Telegram lets bots "
        "download files of up to 20 MB); send a smaller file."
    ),
    T.MEDIA_TOO_LONG: "{name} is longer than {duration}, the most this bot transcribes.",
    T.MEDIA_TOO_MANY: "{name} was skipped: at most {count} files per message are read.",
    T.MEDIA_TURN_TOTAL: "{name} was skipped: the files of one message may total {max}.",
    T.MEDIA_UNSUPPORTED: "{name}: this file type can't be read; only its name was passed on.",
    T.MEDIA_NO_VISION: "{name}: this assistant can't see images.",
    T.MEDIA_CORRUPT: "{name} could not be opened (damaged or not what it claims to be).",
    T.MEDIA_NO_TEXT: "{name} has no text layer (a scan?); only its name was passed on.",
    T.MEDIA_DOWNLOAD_FAILED: "{name} could not be downloaded; please send it again.",
    T.MEDIA_TRANSCRIPTION_FAILED: (
        "{name}: the voice message could not be transcribed; please type it or try again."
    ),
    T.MEDIA_DISABLED: "{name}: this assistant does not read files.",
    T.MEDIA_HEARD: "Heard: {text}",
    T.MEDIA_NAME_IMAGE: "photo",
    T.MEDIA_NAME_VOICE: "voice message",
    T.MEDIA_NAME_AUDIO: "audio",
    T.MEDIA_NAME_VIDEO: "video",
    T.MEDIA_NAME_DOCUMENT: "document",
    T.MEDIA_NAME_STICKER: "sticker",
    T.FILE_TOO_LARGE: "📎 {name} could not be attached: it is over the {max} limit.",
    T.FILE_NOT_ATTACHED: "📎 {name} could not be attached.",
    T.TOOL_PROGRESS: "using {tools}…",
}
