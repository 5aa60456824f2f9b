"""A human takes over a chat: while a chat is paused the bot keeps every message as context and
answers none; an operator resumes it, or it resumes by itself once its pause runs out.

Pure decisions only: whether a pause holds now, when a new pause ends (and when the next one
does), who may switch the bot in a chat with ``/bot off`` / ``/bot on``, what a paused chat keeps
as context, how a chat's address reads from a session key, and how an operator's reply is keyed
(so a DLQ replay still knows it is one).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class BotSwitch(StrEnum):
    OFF = "off"  # pause: a human answers here
    ON = "on"  # resume: the bot answers again


@dataclass(frozen=True)
class Pause:
    """One paused chat (``channel:chat_id``): since when, until when (None: until resumed), by
    whom (``cli``, ``dashboard``, or the ``channel:user`` who sent ``/bot off``)."""

    chat: str
    since: float
    until: float | None
    by: str

    def to_dict(self) -> dict[str, Any]:
        return {"chat": self.chat, "since": self.since, "until": self.until, "by": self.by}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pause:
        until = data.get("until")
        return cls(
            str(data["chat"]),
            float(data["since"]),
            float(until) if until is not None else None,
            str(data.get("by", "")),
        )


def chat_address(channel: str, chat_id: str) -> str:
    return f"{channel}:{chat_id}"


def pause_until(now: float, for_s: float | None, auto_resume_s: float) -> float | None:
    """When a pause taken at ``now`` ends: after ``for_s`` when the operator gave one, else after
    the configured ``auto_resume_s``; 0 (either way) means it lasts until resumed."""
    length = auto_resume_s if for_s is None else for_s
    return now + length if length > 0 else None


def is_paused(pause: Pause | None, now: float) -> bool:
    """A pause holds from when it was taken until its end (exclusive)."""
    return pause is not None and (pause.until is None or now < pause.until)


def resume_due(pause: Pause | None, now: float) -> bool:
    """A stored pause that has run out: the chat resumes by itself."""
    return pause is not None and pause.until is not None and now >= pause.until


def parse_switch(text: str) -> BotSwitch | None:
    """``/bot off`` or ``/bot on`` (also ``/bot@name off``, any case); anything else → None."""
    words = text.strip().split()
    if len(words) != 2 or not words[0].startswith("/"):
        return None
    if words[0][1:].split("@", 1)[0].lower() != "bot":
        return None
    try:
        return BotSwitch(words[1].lower())
    except ValueError:
        return None


def may_switch(channel: str, sender_id: str, operators: Collection[str]) -> bool:
    """Only a configured operator (``channel:user_id`` in ``gateway.operators``) switches the
    bot in a chat; a bot account never does."""
    return bool(sender_id) and f"{channel}:{sender_id}" in operators


def session_chat(session_key: str) -> tuple[str, str] | None:
    """(chat address, reply address) of a session key ``agent:channel:chat[:thread][:u<user>]``:
    ``channel:chat`` and ``channel:chat[:thread]``; None for a key of another shape."""
    parts = session_key.split(":")
    if len(parts) < 3 or not all(parts[:3]):
        return None
    _, channel, chat, *rest = parts
    if rest and rest[-1].startswith("u"):
        rest = rest[:-1]  # the per-user part of a group session
    chat_addr = chat_address(channel, chat)
    reply = f"{chat_addr}:{rest[0]}" if len(rest) == 1 and rest[0] else chat_addr
    return chat_addr, reply


def next_resume(pauses: Iterable[Pause]) -> float | None:
    """When the earliest of ``pauses`` runs out (None: none ends by itself)."""
    ends = [p.until for p in pauses if p.until is not None]
    return min(ends) if ends else None


def kept_as_context(scheduled: bool, elsewhere: bool = False) -> bool:
    """Whether a paused chat's message joins its transcript. A user's does (the model reads it
    once the chat resumes); a scheduled run's does not: its text is an instruction to the model,
    never said in the chat, so it is held (journaled ``paused``, not run, not made up later).
    Nor does work whose answer goes ``elsewhere``, into the paused chat from another channel (a
    webhook's `deliver.to`): its payload is input for the model, not words said in that chat."""
    return not scheduled and not elsewhere


HUMAN_PREFIX = "human:"


def human_key(by: str, unique: str) -> str:
    """The key of an operator's reply (its transcript line's source and its delivery's inbound
    key): ``human:<unique>:<by>``; ``unique`` has no colon, ``by`` may."""
    return f"{HUMAN_PREFIX}{unique}:{by}"


def human_by(key: str | None) -> str | None:
    """Who wrote the operator reply keyed ``key`` (None: not an operator's reply)."""
    if not key or not key.startswith(HUMAN_PREFIX):
        return None
    _, sep, by = key[len(HUMAN_PREFIX) :].partition(":")
    return by if sep and by else None


def ran_out_text(pause: Pause) -> str:
    """The operator chat's notice that a pause ended by itself (config keys are fine here)."""
    taken = pause.by or "an operator"
    return (
        f"chatgate: the pause of {pause.chat} (taken by {taken}) ran out; the bot answers there"
        " again. Pause it again with `chatgate chats pause` if a human is still on it."
    )
