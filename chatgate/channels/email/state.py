"""What the email channel keeps in the state backend (`ChannelFacts`, shared by replicas, kept
across restarts): the folder's cursor (UIDVALIDITY and the last handled UID) and, per message
id, the thread it belongs to, so answers carry the right References on any replica."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from chatgate.clock import Clock
from chatgate.state.protocols import ChannelFacts

CURSOR_TTL_S = 10 * 365 * 86400.0  # as long as the mailbox lives
THREAD_TTL_S = 365 * 86400.0  # a thread answered a year later starts afresh
LOCAL_RECORDS = 20_000


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def thread_id(root: str) -> str:
    """The session's thread id for a thread root (message ids hold characters a target may not)."""
    return _h(root)[:20]


@dataclass(frozen=True)
class Cursor:
    validity: int
    last_uid: int


@dataclass(frozen=True)
class MailRecord:
    """A message of a thread: the root, the subject and the References an answer to it carries."""

    root: str
    subject: str
    references: tuple[str, ...]
    uid: int = 0  # in the watched folder, while its UIDVALIDITY is ``validity``
    validity: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "subject": self.subject,
            "references": list(self.references),
            "uid": self.uid,
            "validity": self.validity,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MailRecord:
        return cls(
            str(data.get("root", "")),
            str(data.get("subject", "")),
            tuple(str(r) for r in data.get("references") or ()),
            int(data.get("uid") or 0),
            int(data.get("validity") or 0),
        )


class MailState:
    def __init__(self, channel: str, facts: ChannelFacts | None, clock: Clock) -> None:
        self._channel = channel
        self._facts = facts
        self._clock = clock
        self._local: dict[str, dict[str, Any]] = {}  # without a state backend (embedding)
        # Records are written once per message id: the ones this replica saw are read locally.
        self._records: OrderedDict[str, MailRecord] = OrderedDict()

    async def _get(self, key: str) -> dict[str, Any] | None:
        if self._facts is None:
            return self._local.get(key)
        found = await self._facts.get_many(self._channel, [key], self._clock.time())
        return found.get(key)

    async def _put(self, key: str, value: dict[str, Any], ttl_s: float) -> None:
        if self._facts is None:
            self._local[key] = value
            return
        await self._facts.put(self._channel, key, value, self._clock.time(), ttl_s)

    async def cursor(self, folder: str) -> Cursor | None:
        found = await self._get(f"cursor:{_h(folder)}")
        if not found:
            return None
        return Cursor(int(found.get("validity", 0)), int(found.get("last_uid", 0)))

    async def save_cursor(self, folder: str, cursor: Cursor) -> None:
        value = {"validity": cursor.validity, "last_uid": cursor.last_uid}
        await self._put(f"cursor:{_h(folder)}", value, CURSOR_TTL_S)

    async def record(self, message_id: str) -> MailRecord | None:
        known = self._records.get(message_id)
        if known is not None:
            return known
        found = await self._get(f"mail:{_h(message_id)}")
        return self._keep(message_id, MailRecord.from_dict(found)) if found else None

    async def remember(self, message_id: str, record: MailRecord) -> None:
        await self._put(f"mail:{_h(message_id)}", record.to_dict(), THREAD_TTL_S)
        self._keep(message_id, record)

    def _keep(self, message_id: str, record: MailRecord) -> MailRecord:
        self._records[message_id] = record
        self._records.move_to_end(message_id)
        while len(self._records) > LOCAL_RECORDS:
            self._records.popitem(last=False)
        return record

    async def subject_root(self, sender: str, subject_key: str) -> str | None:
        found = await self._get(f"subject:{_h(sender + chr(0) + subject_key)}")
        root = found.get("root") if found else None
        return root if isinstance(root, str) else None

    async def remember_subject(self, sender: str, subject_key: str, root: str) -> None:
        key = f"subject:{_h(sender + chr(0) + subject_key)}"
        await self._put(key, {"root": root}, THREAD_TTL_S)
