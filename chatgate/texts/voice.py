"""A Voice speaks to one chat: the catalog in that chat's language and command form.

It is the single place that turns a text id or a failure into the words a user reads, so the
audience rule (user text by default, operator detail only when ``verbose``) holds everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chatgate.policies.failure import FailureReply
from chatgate.policies.reasons import FailureReason
from chatgate.texts.catalog import DEFAULT_LANGUAGE, Catalog, format_wait
from chatgate.texts.commands import HELP_ORDER, PLAIN, CommandStyle
from chatgate.texts.ids import TextId

_HELP_IDS = {
    "new": TextId.HELP_NEW,
    "stop": TextId.HELP_STOP,
    "status": TextId.HELP_STATUS,
    "help": TextId.HELP_HELP,
}


@dataclass(frozen=True)
class Voice:
    catalog: Catalog = field(default_factory=Catalog)
    language: str = DEFAULT_LANGUAGE
    channel: str | None = None
    commands: CommandStyle = PLAIN
    verbose: bool = False

    def text(self, text_id: TextId, **values: object) -> str:
        return self.catalog.render(text_id, self.language, self.channel, **values)

    def wait(self, seconds: float) -> str:
        return format_wait(seconds, self.language)

    def failure(self, reply: FailureReply) -> str:
        """What the chat reads for a failed turn."""
        if self.verbose:  # a private bot: the operator is the user
            detail = reply.detail
            if reply.reason is FailureReason.CONTEXT_OVERFLOW:
                detail = detail.replace("/new", self.commands.form("new"))
            return detail
        wait = self.wait(reply.wait_s) if reply.wait_s is not None else ""
        return self.text(reply.user_text, wait=wait, new=self.commands.form("new"))

    def help(self) -> str:
        """The command list, in the form this platform lets a user type."""
        lines = [self.text(TextId.HELP_TITLE)]
        lines += [f"{self.commands.form(n)} — {self.text(_HELP_IDS[n])}" for n in HELP_ORDER]
        return "\n".join(lines)

    def rate_limited(self, retry_after_s: float) -> str:
        return self.text(TextId.RATE_LIMITED, wait=self.wait(retry_after_s))

    def pairing(self, code: str, name: str, ttl_s: float) -> str:
        hello = (
            self.text(TextId.PAIRING_HELLO, name=name)
            if name
            else self.text(TextId.PAIRING_HELLO_ANONYMOUS)
        )
        return self.text(TextId.PAIRING_PROMPT, hello=hello, code=code, expires=self.wait(ttl_s))
