"""What is stored about one person, store by store: the port every store (and every feature
that keeps per-person data) implements so the operator can show, export and erase it.

A privacy request starts from the journal: the person's messages name the sessions they were
answered in and the chats that are theirs alone. That `Footprint` is handed to every
`PersonalData` part, which returns its records (`Found`) or removes them. An erase leaves
content-free tombstones where dedupe or accounting needs a row: the journal keeps each erased
message's key as a dropped entry, so a platform's redelivery is recognised, never answered again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from chatgate.model.messages import InboundMessage
from chatgate.model.reasons import PrivacyReason

ERASED_STAGE = "privacy"  # the stage a tombstoned journal entry names (`chatgate why`)


def spill_file(state_dir: Path) -> Path:
    """Where transcript lines the session store refused are kept (`session_persist_failed`)."""
    return state_dir / "spill" / "transcripts.jsonl"


@dataclass(frozen=True)
class Person:
    """One sender on one channel (``CHANNEL:USER``)."""

    channel: str
    user: str

    @classmethod
    def parse(cls, address: str) -> Person:
        channel, sep, user = address.partition(":")
        if not sep or not channel or not user or any(c.isspace() for c in address):
            raise ValueError(f"expected CHANNEL:USER, got {address[:80]!r}")
        return cls(channel, user)

    @property
    def address(self) -> str:
        return f"{self.channel}:{self.user}"


@dataclass(frozen=True)
class Footprint:
    """Where a person's data sits, read from the journal before any store is asked.

    ``keys``: the inbound keys of their messages; ``sessions``: every session those messages
    went to; ``own_sessions``: the sessions that are theirs alone (direct chats, per-user group
    sessions), erased whole; ``chats``: their direct chats as ``channel:chat_id``.
    """

    person: Person
    keys: frozenset[str] = frozenset()
    sessions: frozenset[str] = frozenset()
    own_sessions: frozenset[str] = frozenset()
    chats: frozenset[str] = frozenset()

    also: tuple[str, ...] = ()  # the same principal's other addresses, covered too

    def owns_chat(self, channel: str, chat_id: str) -> bool:
        return f"{channel}:{chat_id}" in self.chats

    def union(self, other: Footprint) -> Footprint:
        """This footprint and ``other``'s (another address of the same person)."""
        also = self.also
        if other.person != self.person and other.person.address not in also:
            also = (*also, other.person.address)
        return Footprint(
            self.person,
            self.keys | other.keys,
            self.sessions | other.sessions,
            self.own_sessions | other.own_sessions,
            self.chats | other.chats,
            also,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "person": self.person.address,
            "also": list(self.also),
            "messages": len(self.keys),
            "sessions": sorted(self.sessions),
            "own_sessions": sorted(self.own_sessions),
            "chats": sorted(self.chats),
        }


def own_session(msg: InboundMessage, session: str | None) -> bool:
    """Whether ``session`` belongs to ``msg``'s sender alone (a direct chat, or a group session
    keyed per user)."""
    if session is None:
        return False
    return msg.chat_kind == "direct" or session.endswith(f":u{msg.sender_id}")


def footprint_of(
    person: Person, entries: Sequence[tuple[str, InboundMessage, str | None]]
) -> Footprint:
    """The footprint from the person's journal entries as (key, message, session)."""
    keys, sessions, own, chats = set(), set(), set(), set()
    for key, msg, session in entries:
        keys.add(key)
        if session:
            sessions.add(session)
        if own_session(msg, session):
            own.add(str(session))
        if msg.chat_kind == "direct":
            chats.add(f"{msg.channel}:{msg.chat_id}")
    return Footprint(person, frozenset(keys), frozenset(sessions), frozenset(own), frozenset(chats))


def direct_chats(person: Person, journal: Footprint, paired_chat: str | None) -> frozenset[str]:
    """The person's direct chats: those the journal saw, the one pairing recorded, and the chat
    named like the user (platforms whose direct chat id is the user id: Telegram, WhatsApp,
    web chat, email), so chats the journal has forgotten (past its dedupe window) are found."""
    chats = {*journal.chats, f"{person.channel}:{person.user}"}
    if paired_chat:
        chats.add(f"{person.channel}:{paired_chat}")
    return frozenset(chats)


def session_is_theirs(session: str, person: Person, chats: frozenset[str]) -> bool:
    """Whether session key ``agent:channel:chat[:thread][:u<sender>]`` is the person's alone:
    one of their direct chats, or a group session kept per user for them."""
    _, _, rest = session.partition(":")  # the agent's name holds no colon
    if rest.endswith(f":u{person.user}") and rest.startswith(f"{person.channel}:"):
        return True
    return any(rest == chat or rest.startswith(chat + ":") for chat in chats)


def with_sessions(footprint: Footprint, chats: frozenset[str], own: frozenset[str]) -> Footprint:
    """``footprint`` with the direct chats and whole sessions found besides the journal."""
    return Footprint(
        footprint.person,
        footprint.keys,
        footprint.sessions | own,
        footprint.own_sessions | own,
        footprint.chats | chats,
        footprint.also,
    )


def tombstone(msg: InboundMessage) -> InboundMessage:
    """The content-free stand-in of an erased message: its key (channel, message id) and chat
    kind stay, so dedupe still recognises a redelivery; who sent it and what it said go."""
    return InboundMessage(
        channel=msg.channel,
        platform=msg.platform,
        chat_id="",
        chat_kind=msg.chat_kind,
        sender_id="",
        message_id=msg.message_id,
        text="",
        received_at=msg.received_at,
    )


@dataclass(frozen=True)
class Found:
    """One store's part of an export: JSON-ready records, and files exported as they are."""

    store: str
    records: tuple[Mapping[str, Any], ...] = ()
    files: tuple[Path, ...] = ()

    @property
    def count(self) -> int:
        return len(self.records) + len(self.files)

    def union(self, other: Found) -> Found:
        files = tuple(dict.fromkeys((*self.files, *other.files)))
        return Found(self.store, (*self.records, *other.records), files)


@dataclass(frozen=True)
class Erased:
    """What one store removed (``removed``) and left as content-free tombstones."""

    store: str
    removed: int = 0
    tombstones: int = 0

    def plus(self, other: Erased) -> Erased:
        return Erased(self.store, self.removed + other.removed, self.tombstones + other.tombstones)

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "removed": self.removed, "tombstones": self.tombstones}


@runtime_checkable
class PersonalData(Protocol):
    """One store's view of a person's data (a built-in store, a channel's, a feature's)."""

    @property
    def name(self) -> str: ...

    async def collect(self, footprint: Footprint) -> Found:
        """Everything this store holds about the person."""
        ...

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        """Remove it, leaving content-free tombstones where dedupe or accounting needs them."""
        ...


@dataclass(frozen=True)
class AuditRecord:
    """One privacy action as the audit trail keeps it: what was done, to whom, from where, and
    how much; never any of the person's content."""

    at: float
    action: str  # PrivacyReason value
    person: str
    by: str  # who asked (the API's remote address, or "cli", or "retention")
    counts: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "action": self.action,
            "person": self.person,
            "by": self.by,
            "counts": dict(self.counts),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AuditRecord:
        counts = data.get("counts") or {}
        return cls(
            float(data["at"]),
            str(data["action"]),
            str(data["person"]),
            str(data["by"]),
            {str(k): int(v) for k, v in counts.items()},
        )


class PersonalStores(Protocol):
    """The state backend's side: the footprint, its stores' parts, the audit trail, retention."""

    async def footprint(self, person: Person) -> Footprint: ...

    def parts(self) -> Sequence[PersonalData]:
        """Journal, transcripts, dead letters, pairing and approvals of this backend."""
        ...

    async def audit(self, record: AuditRecord) -> None: ...

    async def audit_log(self, limit: int) -> list[AuditRecord]: ...

    async def expire(self, channel: str, older_than: float, batch: int) -> int:
        """Retention: transcript lines and journal content of ``channel`` received before
        ``older_than``, at most ``batch`` of them; how many were purged (0: nothing left)."""
        ...

    async def compact(self) -> None:
        """After an erase: make removed content unrecoverable from the files (no-op on Redis)."""
        ...


__all__ = [
    "ERASED_STAGE",
    "AuditRecord",
    "Erased",
    "Footprint",
    "Found",
    "Person",
    "PersonalData",
    "PersonalStores",
    "PrivacyReason",
    "direct_chats",
    "footprint_of",
    "own_session",
    "session_is_theirs",
    "spill_file",
    "tombstone",
    "with_sessions",
]
