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


# The placeholders each template must use, in every language and every override.
PLACEHOLDERS: dict[TextId, frozenset[str]] = {
    TextId.FAILURE_BUSY_WAIT: frozenset({"wait"}),
    TextId.FAILURE_TOO_LONG: frozenset({"new"}),
    TextId.FAILURE_UNAVAILABLE_WAIT: frozenset({"wait"}),
    TextId.RATE_LIMITED: frozenset({"wait"}),
    TextId.PAIRING_PROMPT: frozenset({"hello", "code", "expires"}),
    TextId.PAIRING_HELLO: frozenset({"name"}),
}


def placeholders(text_id: TextId) -> frozenset[str]:
    return PLACEHOLDERS.get(text_id, frozenset())
