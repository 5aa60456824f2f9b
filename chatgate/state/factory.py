"""Build every state backend from `gateway.store.backend` and `gateway.turn_lock.backend`.

A new backend is one module per protocol plus one line in a table below; nothing else in the
runtime, the operator API or the CLI names a backend.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from chatgate.clock import Clock
from chatgate.config.models import GatewaySection
from chatgate.state.personal import PersonalStores
from chatgate.state.protocols import (
    CallbackStore,
    ChannelFacts,
    ChannelLeases,
    DeadLetterStore,
    DeadTargetStore,
    Journal,
    PairingStore,
    PauseStore,
    SessionStore,
    TurnLock,
)

SHARED_KV = "redis"  # ChannelContext.kv: the backend's client for channels' own stores


class StoreUnreachable(Exception):
    """The configured store cannot be reached at start; the message names the key to check
    and never the URL's credentials. The daemon exits 75 (EX_TEMPFAIL): try again later."""


@dataclass
class Stores:
    """Everything a store backend provides, plus how to open and close it."""

    journal: Journal
    dead_letters: DeadLetterStore
    dead_targets: DeadTargetStore
    pairing: PairingStore
    callbacks: CallbackStore
    sessions: SessionStore
    leases: ChannelLeases
    facts: ChannelFacts
    pauses: PauseStore
    open: Callable[[], Awaitable[None]]
    close: Callable[[], Awaitable[None]]
    # Further stores a channel reads by name from `ChannelContext.kv` (e.g. "webchat").
    kv: dict[str, object] = field(default_factory=dict)
    # The backend's connection client (its pool), for the turn lock and the job store of the
    # same process to share, so a replica keeps one bounded set of connections; closed by
    # ``close``. None when the backend has no network client.
    client: object | None = None
    # A cheap round trip to a networked store (Redis PING on the data pool), so readiness
    # notices an outage without waiting for a write to fail. None: nothing to ping.
    ping: Callable[[], Awaitable[object]] | None = None
    # A person's data across these stores (privacy requests, retention).
    personal: PersonalStores | None = None


@dataclass
class State:
    """The gateway's state: the stores plus the turn lock."""

    stores: Stores
    turn_lock: TurnLock
    _opened: bool = field(default=False, repr=False)

    async def open(self) -> None:
        await self.stores.open()
        self._opened = True

    async def close(self) -> None:
        if self._opened:
            await self.stores.callbacks.flush()
            await self.stores.close()
            self._opened = False
        await self.turn_lock.aclose()

    # Flat access for the runtime.
    @property
    def journal(self) -> Journal:
        return self.stores.journal

    @property
    def dead_letters(self) -> DeadLetterStore:
        return self.stores.dead_letters

    @property
    def dead_targets(self) -> DeadTargetStore:
        return self.stores.dead_targets

    @property
    def pairing(self) -> PairingStore:
        return self.stores.pairing

    @property
    def callbacks(self) -> CallbackStore:
        return self.stores.callbacks

    @property
    def sessions(self) -> SessionStore:
        return self.stores.sessions

    @property
    def leases(self) -> ChannelLeases:
        return self.stores.leases

    @property
    def facts(self) -> ChannelFacts:
        return self.stores.facts

    @property
    def pauses(self) -> PauseStore:
        return self.stores.pauses


StoreFactory = Callable[[GatewaySection, Path], Stores]
LockFactory = Callable[[GatewaySection, Clock, object | None], TurnLock]

# backend name → "module:function" building it (imported only when that backend is chosen)
STORE_BACKENDS: dict[str, str] = {
    "sqlite": "chatgate.state.sqlite:build_stores",
    "redis": "chatgate.state.redis:build_stores",
}
LOCK_BACKENDS: dict[str, str] = {
    "local": "chatgate.state.local_lock:build_lock",
    "redis": "chatgate.state.redis.lock:build_lock",
}


def _factory(table: dict[str, str], name: str, what: str) -> Callable[..., object]:
    path = table.get(name)
    if path is None:
        raise ValueError(f"unknown {what} backend {name!r} (known: {', '.join(sorted(table))})")
    module, _, attr = path.partition(":")
    factory: Callable[..., object] = getattr(importlib.import_module(module), attr)
    return factory


def build_state(gateway: GatewaySection, state_dir: Path, clock: Clock) -> State:
    """The configured backends, not yet opened."""
    stores = _factory(STORE_BACKENDS, gateway.store.backend, "store")(gateway, state_dir)
    lock = _factory(LOCK_BACKENDS, gateway.turn_lock.backend, "turn lock")(
        gateway, clock, stores.client if isinstance(stores, Stores) else None
    )
    assert isinstance(stores, Stores)
    return State(stores, lock)  # type: ignore[arg-type]
