"""Tool approval decisions: the prompt's id and button values, who may answer, yes/no replies,
expiry, and what a press does to a prompt in a given state.

Pure functions over plain values; the gateway's approval desk does the I/O around them.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from chatgate.model.reasons import ApprovalReason

PRESS_PREFIX = "apv:"  # button values: "apv:y:<id>" / "apv:n:<id>" (fits Telegram's 64 bytes)
ID_CHARS = 20
ARGUMENTS_SHOWN_CHARS = 600  # the prompt shows at most this much of the (masked) arguments


class ApprovalState(StrEnum):
    """Where one approval prompt stands (the store keeps it, ``chatgate why`` shows it)."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"  # the turn that asked ended first (/stop, or a newer message)

    @property
    def decided(self) -> bool:
        return self is not ApprovalState.PENDING


# The reason code of each final state (metrics, logs, the trail).
STATE_REASONS: dict[ApprovalState, ApprovalReason] = {
    ApprovalState.APPROVED: ApprovalReason.APPROVED,
    ApprovalState.DENIED: ApprovalReason.DENIED,
    ApprovalState.TIMED_OUT: ApprovalReason.TIMED_OUT,
    ApprovalState.CANCELLED: ApprovalReason.CANCELLED,
}

# Replies that answer a prompt where no button can (en, de, es, fr, ru), compared casefolded
# without accents or trailing punctuation.
YES_WORDS = frozenset({"yes", "y", "approve", "ok", "ja", "si", "oui", "да", "одобрить"})
NO_WORDS = frozenset({"no", "n", "deny", "nein", "non", "нет", "отклонить"})


@dataclass(frozen=True)
class Deciders:
    """Who may answer a prompt: everyone in an operator chat (``user_id`` None), or one user of
    one chat (the session's own user)."""

    channel: str
    chat_id: str
    user_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"channel": self.channel, "chat_id": self.chat_id, "user_id": self.user_id}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Deciders:
        user = data.get("user_id")
        return cls(str(data["channel"]), str(data["chat_id"]), str(user) if user else None)


@dataclass(frozen=True)
class Answer:
    """One press or yes/no reply as the gateway heard it."""

    channel: str
    chat_id: str
    sender_id: str
    approve: bool
    edited: bool = False


def approval_id(inbound_key: str, tool: str, arguments: Any, occurrence: int) -> str:
    """Stable id of one call's prompt: the same call of the same message asks once, also when
    the turn runs again after a restart (the model asks for it again)."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    raw = f"{inbound_key}\x00{tool}\x00{canonical}\x00{occurrence}"
    return hashlib.blake2s(raw.encode(), digest_size=ID_CHARS // 2).hexdigest()


def press_value(approve: bool, ident: str) -> str:
    """The button value that answers prompt ``ident``."""
    return f"{PRESS_PREFIX}{'y' if approve else 'n'}:{ident}"


def parse_press(value: str | None) -> tuple[bool, str] | None:
    """(approve, id) of an approval button value; None for any other value."""
    if not value or not value.startswith(PRESS_PREFIX):
        return None
    choice, _, ident = value[len(PRESS_PREFIX) :].partition(":")
    if choice not in ("y", "n") or len(ident) != ID_CHARS or not ident.isalnum():
        return None
    return choice == "y", ident


def parse_reply(text: str) -> bool | None:
    """True for a yes, False for a no (in any catalog language), None for anything else."""
    word = text.strip().rstrip(".!?¡¿ ").lstrip("¡¿").strip()
    if not word or len(word) > 16:
        return None
    low = word.casefold()
    folded = (  # ASCII has no accents to fold away (most messages: no per-character pass)
        low
        if low.isascii()
        else "".join(c for c in unicodedata.normalize("NFKD", low) if not unicodedata.combining(c))
    )
    if folded in YES_WORDS or low in YES_WORDS:
        return True
    if folded in NO_WORDS or low in NO_WORDS:
        return False
    return None


def may_decide(deciders: Deciders, answer: Answer) -> bool:
    """Whether ``answer`` comes from someone allowed to decide (the right chat and user)."""
    if answer.channel != deciders.channel or answer.chat_id != deciders.chat_id:
        return False
    return deciders.user_id is None or answer.sender_id == deciders.user_id


def expired(now: float, expires_at: float) -> bool:
    return now >= expires_at


def judge(
    state: ApprovalState | None, expires_at: float, deciders: Deciders, answer: Answer, now: float
) -> ApprovalReason:
    """What an answer does to a prompt in ``state``: APPROVED or DENIED when it decides, else
    the reason it is ignored."""
    if answer.edited:
        return ApprovalReason.EDITED
    if state is None:
        return ApprovalReason.UNKNOWN
    if not may_decide(deciders, answer):
        return ApprovalReason.NOT_APPROVER
    if state.decided or expired(now, expires_at):
        return ApprovalReason.ALREADY_DECIDED
    return ApprovalReason.APPROVED if answer.approve else ApprovalReason.DENIED


def shown_arguments(arguments: Any, limit: int = ARGUMENTS_SHOWN_CHARS) -> str:
    """The (already masked) arguments as the prompt shows them: compact JSON, size-capped."""
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)] + "…"


def deciders_for(
    approver: str | None,
    origin: tuple[str, str],
    user_id: str,
    reply_to: tuple[str, str, str | None] | None,
) -> tuple[Deciders, tuple[str, str, str | None]] | None:
    """Who decides and where the prompt goes (channel, chat, thread); None: nobody to ask.

    The configured operator chat (``channel:chat[:thread]``, anyone in it) wins; else the prompt
    goes where the answer goes: in the chat the message came from only its sender decides; a
    turn answering elsewhere (a webhook delivering to a team chat) is decided by that chat.
    """
    if approver:
        parts = approver.split(":")
        thread = parts[2] if len(parts) > 2 else None
        return Deciders(parts[0], parts[1]), (parts[0], parts[1], thread)
    if reply_to is None:
        return None
    channel, chat, _ = reply_to
    if (channel, chat) == origin:
        return Deciders(channel, chat, user_id), reply_to
    return Deciders(channel, chat), reply_to
