"""Warm-session cache (LRU) in front of the SessionStore.

A warm session holds the transcript tail in memory so a turn does not read the store. Eviction
never touches a session with a turn in flight or with transcript entries that failed to persist;
an evicted session is rebuilt from the store on its next turn.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from chatgate.model.chat import ChatMessage
from chatgate.policies.memory import WarmSessionFacts
from chatgate.state.protocols import SessionStore


@dataclass(slots=True, eq=False)
class WarmSession:
    key: str
    epoch: int
    transcript: list[ChatMessage]
    last_activity: float
    in_flight: int = 0
    unflushed: list[ChatMessage] = field(default_factory=list)
    revision: int | None = None  # the store's revision this copy was loaded at

    @property
    def flushed(self) -> bool:
        return not self.unflushed


class SessionCache:
    def __init__(self, store: SessionStore, *, max_warm: int, max_messages: int) -> None:
        self.store = store
        self.max_warm = max_warm
        self.max_messages = max_messages
        self._warm: OrderedDict[str, WarmSession] = OrderedDict()
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._warm)

    def get(self, key: str) -> WarmSession | None:
        return self._warm.get(key)

    def transient(self, key: str, now: float) -> WarmSession:
        """A session nobody reads again (a one-shot webhook delivery): new and empty, and never
        kept, so no store read, no cache entry and nothing to evict after its turn."""
        return WarmSession(key, 0, [], now, in_flight=1)

    async def acquire(self, key: str, now: float) -> WarmSession:
        """The warm session for ``key`` (loading it from the store on a miss), marked in flight."""
        session = self._warm.get(key)
        if session is not None and not session.in_flight and session.flushed:
            revision = await self.store.revision(key)
            if revision is not None and revision != session.revision:
                del self._warm[key]  # another replica wrote it: rebuild from the store
                session = None
        if session is None:
            stored = await self.store.load(key, self.max_messages)
            session = self._warm.get(key)  # another task may have loaded it meanwhile
            if session is None:
                session = WarmSession(key, stored.epoch, stored.messages, now)
                session.revision = stored.revision
                self._warm[key] = session
        self._warm.move_to_end(key)
        session.in_flight += 1
        session.last_activity = now
        self._shrink()
        return session

    def release(self, session: WarmSession) -> None:
        session.in_flight = max(0, session.in_flight - 1)

    def extend(self, session: WarmSession, messages: Sequence[ChatMessage]) -> None:
        session.transcript.extend(messages)
        overflow = len(session.transcript) - self.max_messages
        if overflow > 0:
            del session.transcript[:overflow]

    def reset(self, session: WarmSession, epoch: int) -> None:
        session.epoch = epoch
        session.transcript.clear()
        session.unflushed.clear()

    def evict(self, key: str) -> bool:
        session = self._warm.get(key)
        if session is None or session.in_flight or not session.flushed:
            return False
        del self._warm[key]
        self.evictions += 1
        return True

    def drop(self, key: str) -> None:
        """Forget ``key``'s warm copy even mid-turn (its stored transcript was erased): the
        running turn keeps its own copy, the next one reads the store."""
        self._warm.pop(key, None)

    def facts(self) -> list[WarmSessionFacts]:
        return [
            WarmSessionFacts(s.key, s.last_activity, bool(s.in_flight), s.flushed)
            for s in self._warm.values()
        ]

    def _shrink(self) -> None:
        if len(self._warm) <= self.max_warm:
            return
        for key in list(self._warm):
            if len(self._warm) <= self.max_warm:
                break
            self.evict(key)
