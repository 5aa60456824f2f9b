"""TurnLock: serialise turns of one session (in-process; a Redis lease across replicas is not built).

``release`` is identity-checked and idempotent: only the token handed out by the latest
``acquire`` releases, so a stale token can never free a lock a later holder owns.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, eq=False)
class LeaseToken:
    key: str
    owner: str
    expires_at: float


class TurnLock(Protocol):
    async def acquire(self, key: str, *, owner: str, ttl: float) -> LeaseToken: ...

    async def release(self, token: LeaseToken) -> None: ...

    def hold(
        self, key: str, *, owner: str, ttl: float
    ) -> AbstractAsyncContextManager[LeaseToken]: ...


class LocalTurnLock:
    """asyncio.Lock per key; entries are dropped when nobody holds or waits for them."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._holders: dict[str, LeaseToken] = {}
        self._waiters: dict[str, int] = {}

    async def acquire(self, key: str, *, owner: str, ttl: float) -> LeaseToken:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        self._waiters[key] = self._waiters.get(key, 0) + 1
        try:
            await lock.acquire()
        finally:
            self._waiters[key] -= 1
        token = LeaseToken(key, owner, 0.0)
        self._holders[key] = token
        return token

    async def release(self, token: LeaseToken) -> None:
        if self._holders.get(token.key) is not token:
            return
        del self._holders[token.key]
        lock = self._locks[token.key]
        lock.release()
        if not self._waiters.get(token.key):
            self._waiters.pop(token.key, None)
            del self._locks[token.key]

    @asynccontextmanager
    async def hold(self, key: str, *, owner: str, ttl: float) -> AsyncIterator[LeaseToken]:
        token = await self.acquire(key, owner=owner, ttl=ttl)
        try:
            yield token
        finally:
            await self.release(token)

    def __len__(self) -> int:
        return len(self._locks)
