"""Warm-session cache (LRU) in front of the SessionStore, and session-key derivation.

A warm session holds the transcript tail in memory so a turn does not read the store. Eviction
never touches a session with a turn in flight or with transcript entries that failed to persist;
an evicted session is rebuilt from the store on its next turn.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from chatgate.agents.base import ChatMessage
from chatgate.channels.types import InboundMessage
from chatgate.config.models import RouteBindingConfig
from chatgate.gateway.store import SessionStore
from chatgate.policies.memory import WarmSessionFacts


@dataclass(slots=True, eq=False)
class WarmSession:
    key: str
    epoch: int
    transcript: list[ChatMessage]
    last_activity: float
    in_flight: int = 0
    unflushed: list[ChatMessage] = field(default_factory=list)

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

    async def acquire(self, key: str, now: float, *, fresh: bool = False) -> WarmSession:
        """The warm session for ``key`` (loading it from the store on a miss), marked in flight.

        ``fresh`` says the caller knows the session is new (a one-shot webhook delivery), which
        saves the store read.
        """
        session = self._warm.get(key)
        if session is None and fresh:
            session = self._warm[key] = WarmSession(key, 0, [], now)
        if session is None:
            stored = await self.store.load(key, self.max_messages)
            session = self._warm.get(key)  # another task may have loaded it meanwhile
            if session is None:
                session = WarmSession(key, stored.epoch, stored.messages, now)
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


def resolve_agent(
    msg: InboundMessage, bindings: Sequence[RouteBindingConfig], channel_default: str
) -> str:
    """First matching route binding wins; otherwise the message's own or the channel's agent."""
    if msg.agent:
        return msg.agent
    for binding in bindings:
        m = binding.match
        if m.channel is not None and m.channel != msg.channel:
            continue
        if m.chat_id is not None and m.chat_id != msg.chat_id:
            continue
        if m.thread_id is not None and m.thread_id != msg.thread_id:
            continue
        if m.sender_id is not None and m.sender_id != msg.sender_id:
            continue
        if m.chat_kind is not None and m.chat_kind != msg.chat_kind:
            continue
        return binding.agent
    return channel_default


def session_key(agent: str, msg: InboundMessage, *, per_user_in_groups: bool) -> str:
    """agent:channel:chat[:thread][:sender] — or the adapter's explicit hint (webhook templates)."""
    if msg.session_hint is not None:
        return f"{agent}:{msg.channel}:{msg.session_hint}"
    key = f"{agent}:{msg.channel}:{msg.chat_id}"
    if msg.thread_id:
        key += f":{msg.thread_id}"
    if per_user_in_groups and msg.chat_kind != "direct":
        key += f":u{msg.sender_id}"
    return key
