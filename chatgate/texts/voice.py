"""A Voice speaks to one chat: the catalog in that chat's language and command form.

It is the single place that turns a text id or a failure into the words a user reads, so the
audience rule (user text by default, operator detail only when ``verbose``) holds everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from chatgate.model.reasons import FailureReason
from chatgate.model.text_ids import TextId
from chatgate.policies.failure import FailureReply
from chatgate.policies.media import KIND_NAMES, MediaNotice
from chatgate.texts.catalog import DEFAULT_LANGUAGE, Catalog, format_size, format_wait
from chatgate.texts.commands import HELP_ORDER, PLAIN, CommandStyle

_SETUP = TextId.FAILURE_SETUP
_USER_TEXTS: dict[FailureReason, TextId] = {
    FailureReason.AUTH_EXPIRED: _SETUP,
    FailureReason.AUTH_PERMANENT: _SETUP,
    FailureReason.MISSING_KEY: _SETUP,
    FailureReason.MODEL_NOT_FOUND: _SETUP,
    FailureReason.BUDGET_EXHAUSTED: _SETUP,
    FailureReason.PROVIDER_QUOTA: _SETUP,
    FailureReason.RATE_LIMIT: TextId.FAILURE_BUSY,
    FailureReason.OVERLOADED: TextId.FAILURE_BUSY,
    FailureReason.TIMEOUT: TextId.FAILURE_TIMEOUT,
    FailureReason.CONTEXT_OVERFLOW: TextId.FAILURE_TOO_LONG,
    FailureReason.CANCELLED: TextId.FAILURE_CANCELLED,
    FailureReason.FORMAT_ERROR: TextId.FAILURE_INVALID,
    FailureReason.UNAVAILABLE: TextId.FAILURE_UNAVAILABLE,
    FailureReason.MEMORY_PRESSURE: TextId.FAILURE_OVERLOADED_HERE,
    FailureReason.TOOL_LIMIT: TextId.FAILURE_TOOL_LIMIT,
    FailureReason.TOOL_TIMEOUT: TextId.FAILURE_TOOL_TIMEOUT,
    FailureReason.TOOL_BUDGET: TextId.FAILURE_TOOL_BUDGET,
    FailureReason.TOOL_FAILED: TextId.FAILURE_TOOL_FAILED,
    FailureReason.UNKNOWN: TextId.FAILURE_UNKNOWN,
}
# The user text naming a concrete wait, used instead when a retry-after figure is known.
_WAIT_TEXTS = {
    TextId.FAILURE_BUSY: TextId.FAILURE_BUSY_WAIT,
    TextId.FAILURE_UNAVAILABLE: TextId.FAILURE_UNAVAILABLE_WAIT,
}


_HELP_IDS = {
    "new": TextId.HELP_NEW,
    "stop": TextId.HELP_STOP,
    "status": TextId.HELP_STATUS,
    "jobs": TextId.HELP_JOBS,
    "help": TextId.HELP_HELP,
}


class NoteItem(Protocol):
    """One thing a channel could not show as sent (presentation's degrade report)."""

    @property
    def text_id(self) -> str: ...
    @property
    def count(self) -> int: ...
    @property
    def values(self) -> Mapping[str, object]: ...


class NoteReport(Protocol):
    @property
    def items(self) -> tuple[NoteItem, ...]: ...


def user_text(reply: FailureReply) -> TextId:
    """The catalog text a chat user reads for a failure (the variant naming a wait if known)."""
    text_id = _USER_TEXTS[reply.reason]
    return _WAIT_TEXTS.get(text_id, text_id) if reply.wait_s is not None else text_id


@dataclass(frozen=True)
class Voice:
    catalog: Catalog = field(default_factory=Catalog)
    language: str = DEFAULT_LANGUAGE
    channel: str | None = None
    agent: str | None = None
    commands: CommandStyle = PLAIN
    verbose: bool = False

    def text(self, text_id: TextId, **values: object) -> str:
        return self.catalog.render(text_id, self.language, self.channel, self.agent, **values)

    def wait(self, seconds: float) -> str:
        return format_wait(seconds, self.language)

    def failure(self, reply: FailureReply) -> str:
        """What the chat reads for a failed turn."""
        if self.verbose:  # a private bot: the operator is the user
            detail = reply.detail
            if reply.reason is FailureReason.CONTEXT_OVERFLOW:
                detail = detail.replace("/new", self.commands.form("new"))
            return detail
        text_id = user_text(reply)
        wait = self.wait(reply.wait_s) if reply.wait_s is not None else ""
        return self.text(text_id, wait=wait, new=self.commands.form("new"))

    def help(self) -> str:
        """The command list, in the form this platform lets a user type."""
        lines = [self.text(TextId.HELP_TITLE)]
        lines += [f"{self.commands.form(n)} — {self.text(_HELP_IDS[n])}" for n in HELP_ORDER]
        return "\n".join(lines)

    def status(
        self, *, agent: str, model: str | None, history: int, queued: int, running: bool
    ) -> str:
        """The `/status` reply: the agent answering, the context size, and what runs now."""
        lines = [self.text(TextId.STATUS_UP)]
        if model:
            lines.append(self.text(TextId.STATUS_AGENT_MODEL, assistant=agent, model=model))
        else:
            lines.append(self.text(TextId.STATUS_AGENT, assistant=agent))
        lines.append(self.text(TextId.STATUS_HISTORY, count=history))
        if running:
            if queued:
                lines.append(self.text(TextId.STATUS_WORKING_QUEUED, count=queued))
            else:
                lines.append(self.text(TextId.STATUS_WORKING))
        return "\n".join(lines)

    def degrade_note(self, report: NoteReport) -> str:
        """The note under a reply naming what the channel could not show as sent."""
        items = "; ".join(
            self.text(TextId(item.text_id), count=item.count, **item.values)
            for item in report.items
        )
        return self.text(TextId.DEGRADE_NOTE, items=items)

    def rate_limited(self, retry_after_s: float) -> str:
        return self.text(TextId.RATE_LIMITED, wait=self.wait(retry_after_s))

    def pairing(self, code: str, name: str, ttl_s: float) -> str:
        hello = (
            self.text(TextId.PAIRING_HELLO, name=name)
            if name
            else self.text(TextId.PAIRING_HELLO_ANONYMOUS)
        )
        return self.text(TextId.PAIRING_PROMPT, hello=hello, code=code, expires=self.wait(ttl_s))

    def size(self, size: int) -> str:
        return format_size(size, self.language)

    def media(self, notice: MediaNotice) -> str:
        """A file notice (refused, failed, or what was heard), sizes and durations included."""
        kind_name = KIND_NAMES.get(notice.kind)
        name = notice.name or (self.text(kind_name) if kind_name else notice.kind)
        return self.text(
            notice.text_id,
            name=name,
            max=self.size(notice.max_bytes),
            duration=self.wait(notice.seconds),
            count=notice.count,
            text=notice.text,
        )
