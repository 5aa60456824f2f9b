"""Ids of every text a chat user can see; the catalog holds one template per id and language."""

from __future__ import annotations

from enum import StrEnum


class TextId(StrEnum):
    """A user-facing text. Templates use ``{name}`` placeholders (see ``PLACEHOLDERS``)."""

    FAILURE_SETUP = "failure.setup"
    FAILURE_BUSY = "failure.busy"
    FAILURE_BUSY_WAIT = "failure.busy_wait"
    FAILURE_TIMEOUT = "failure.timeout"
    FAILURE_TOO_LONG = "failure.too_long"
    FAILURE_CANCELLED = "failure.cancelled"
    FAILURE_INVALID = "failure.invalid"
    FAILURE_UNAVAILABLE = "failure.unavailable"
    FAILURE_UNAVAILABLE_WAIT = "failure.unavailable_wait"
    FAILURE_OVERLOADED_HERE = "failure.overloaded_here"
    FAILURE_UNKNOWN = "failure.unknown"
    HELP_TITLE = "help.title"
    HELP_NEW = "help.new"
    HELP_STOP = "help.stop"
    HELP_STATUS = "help.status"
    HELP_HELP = "help.help"
    STOPPED = "command.stopped"
    NOTHING_TO_STOP = "command.nothing_to_stop"
    NEW_SESSION = "command.new_session"
    QUEUE_FULL = "notice.queue_full"
    RATE_LIMITED = "notice.rate_limited"
    PAIRING_PROMPT = "pairing.prompt"
    PAIRING_HELLO = "pairing.hello"
    PAIRING_HELLO_ANONYMOUS = "pairing.hello_anonymous"
    PAIRING_FULL = "pairing.full"
    PAIRING_APPROVED = "pairing.approved"
    STALE_NOTICE = "notice.stale"
    MEDIA_TOO_LARGE = "media.too_large"
    MEDIA_TOO_LARGE_TELEGRAM = "media.too_large_telegram"
    MEDIA_TOO_LONG = "media.too_long"
    MEDIA_TOO_MANY = "media.too_many"
    MEDIA_TURN_TOTAL = "media.turn_total"
    MEDIA_UNSUPPORTED = "media.unsupported"
    MEDIA_NO_VISION = "media.no_vision"
    MEDIA_CORRUPT = "media.corrupt"
    MEDIA_NO_TEXT = "media.no_text"
    MEDIA_DOWNLOAD_FAILED = "media.download_failed"
    MEDIA_TRANSCRIPTION_FAILED = "media.transcription_failed"
    MEDIA_DISABLED = "media.disabled"
    MEDIA_HEARD = "media.heard"
    MEDIA_NAME_IMAGE = "media.name.image"
    MEDIA_NAME_VOICE = "media.name.voice"
    MEDIA_NAME_AUDIO = "media.name.audio"
    MEDIA_NAME_VIDEO = "media.name.video"
    MEDIA_NAME_DOCUMENT = "media.name.document"
    MEDIA_NAME_STICKER = "media.name.sticker"
    FILE_TOO_LARGE = "files.too_large"
    FILE_NOT_ATTACHED = "files.not_attached"
    TOOL_PROGRESS = "tools.progress"


# The placeholders each template must use, in every language and every override.
PLACEHOLDERS: dict[TextId, frozenset[str]] = {
    TextId.FAILURE_BUSY_WAIT: frozenset({"wait"}),
    TextId.FAILURE_TOO_LONG: frozenset({"new"}),
    TextId.FAILURE_UNAVAILABLE_WAIT: frozenset({"wait"}),
    TextId.RATE_LIMITED: frozenset({"wait"}),
    TextId.PAIRING_PROMPT: frozenset({"hello", "code", "expires"}),
    TextId.PAIRING_HELLO: frozenset({"name"}),
    TextId.MEDIA_TOO_LARGE: frozenset({"name", "max"}),
    TextId.MEDIA_TOO_LARGE_TELEGRAM: frozenset({"name", "max"}),
    TextId.MEDIA_TOO_LONG: frozenset({"name", "duration"}),
    TextId.MEDIA_TOO_MANY: frozenset({"name", "count"}),
    TextId.MEDIA_TURN_TOTAL: frozenset({"name", "max"}),
    TextId.MEDIA_UNSUPPORTED: frozenset({"name"}),
    TextId.MEDIA_NO_VISION: frozenset({"name"}),
    TextId.MEDIA_CORRUPT: frozenset({"name"}),
    TextId.MEDIA_NO_TEXT: frozenset({"name"}),
    TextId.MEDIA_DOWNLOAD_FAILED: frozenset({"name"}),
    TextId.MEDIA_TRANSCRIPTION_FAILED: frozenset({"name"}),
    TextId.MEDIA_DISABLED: frozenset({"name"}),
    TextId.MEDIA_HEARD: frozenset({"text"}),
    TextId.FILE_TOO_LARGE: frozenset({"name", "max"}),
    TextId.FILE_NOT_ATTACHED: frozenset({"name"}),
    TextId.TOOL_PROGRESS: frozenset({"tools"}),
}


def placeholders(text_id: TextId) -> frozenset[str]:
    return PLACEHOLDERS.get(text_id, frozenset())
