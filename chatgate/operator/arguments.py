"""The arguments of the built-in operator actions: each field is an API parameter and a CLI
argument (see `actions.arg` for its CLI shape and bounds)."""

from __future__ import annotations

from dataclasses import dataclass

from chatgate.operator.actions import arg


@dataclass(frozen=True)
class NoArgs:
    """An action without arguments."""


@dataclass(frozen=True)
class DlqListArgs:
    limit: int = arg(100, cli="option", help="most entries shown", low=1, high=10_000)


@dataclass(frozen=True)
class EntryArgs:
    id: int = arg(help="DLQ entry id")


@dataclass(frozen=True)
class PairingCodeArgs:
    channel: str = arg(help="channel name")
    code: str = arg(help="the pairing code the user was sent")


@dataclass(frozen=True)
class RevokeArgs:
    channel: str = arg(help="channel name")
    sender_id: str = arg(help="the approved user's id")


@dataclass(frozen=True)
class SessionArgs:
    key: str = arg(help="session key")


@dataclass(frozen=True)
class WhyArgs:
    channel: str = arg(help="channel name")
    message_id: str | None = arg(None, cli="optional_positional", help="the message's id")
    user: str | None = arg(None, cli="option", help="a sender's latest messages instead")

    def problem(self) -> str | None:
        """What the CLI refuses before asking (the API answers with no trails)."""
        if self.message_id is None and self.user is None:
            return "give a MESSAGE_ID or --user ID"
        return None
