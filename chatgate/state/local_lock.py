"""TurnLock within one process: leases with a TTL, like the Redis lock but in memory.

A holder that stops renewing loses the lease after ``ttl`` and the next waiter takes over.
``release`` and ``renew`` are identity-checked by the lease's token, so a stale token never frees
or extends a lease a later holder owns. Waiters are served first come, first served.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence

from chatgate.clock import Clock, SystemClock
from chatgate.config.models import GatewaySection
from chatgate.state.records import LeaseToken

log = logging.getLogger("chatgate.turnlock")


class LocalTurnLock:
    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._held: dict[str, LeaseToken] = {}
        self._waiters: dict[str, deque[asyncio.Future[None]]] = {}
        self._tokens = itertools.count(1)  # unique within this lock, which is all a token needs

    def __len__(self) -> int:
        """Keys held or waited for (entries are dropped as soon as neither is true)."""
        return len(self._held.keys() | self._waiters.keys())

    async def acquire(self, key: str, *, owner: str, ttl: float) -> LeaseToken:
        while True:
            now = self._clock.monotonic()
            holder = self._held.get(key)
            queue = self._waiters.get(key)
            if holder is None or holder.expires_at <= now:
                if holder is not None:
                    log.warning(
                        "turn lock lease expired; taking over",
                        extra={"session": key, "previous_owner": holder.owner},
                    )
                lease = LeaseToken(key, owner, now + ttl, f"{next(self._tokens):x}")
                self._held[key] = lease
                return lease
            await self._wait(key, queue, holder.expires_at - now)

    async def _wait(
        self, key: str, queue: deque[asyncio.Future[None]] | None, lease_left_s: float
    ) -> None:
        """Until the holder releases (we are woken) or its lease runs out."""
        if queue is None:
            queue = self._waiters[key] = deque()
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append(woken)
        expiry = asyncio.ensure_future(self._clock.sleep(lease_left_s))
        try:
            await asyncio.wait({woken, expiry}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            expiry.cancel()
            if not woken.done():
                woken.cancel()
            with contextlib.suppress(ValueError):
                queue.remove(woken)
            if not queue:
                self._waiters.pop(key, None)

    async def renew(self, token: LeaseToken, ttl: float) -> bool:
        holder = self._held.get(token.key)
        if holder is None or holder.token != token.token:
            return False
        self._held[token.key] = LeaseToken(
            token.key, token.owner, self._clock.monotonic() + ttl, token.token
        )
        return True

    async def release(self, token: LeaseToken) -> None:
        holder = self._held.get(token.key)
        if holder is None or holder.token != token.token:
            return
        del self._held[token.key]
        queue = self._waiters.get(token.key)
        while queue:
            woken = queue.popleft()
            if not woken.done():
                woken.set_result(None)
                break

    async def aclose(self) -> None:
        """Nothing to close: the lock lives in this process's memory."""

    async def release_leftovers(self) -> int:
        """Nothing left over: the lock died with its process."""
        return 0

    async def restore(self, handed: Mapping[str, str], ttl: float) -> int:
        """Nothing lost: the lock lives in this process's memory."""
        return 0

    def pass_on(self, token: LeaseToken, message_key: str) -> None:
        return None  # one process: nothing is handed off to another

    def strand(self, session: str, message_key: str, token: LeaseToken | None, ttl: float) -> None:
        return None  # one process: its resumed message goes first in the session's queue

    async def retry_pending(self) -> None:
        """Nothing pending: the lock lives in this process's memory."""

    def hold(
        self,
        key: str,
        *,
        owner: str,
        ttl: float,
        after: str | None = None,
        give_way: Callable[[], bool] | None = None,
        from_dead: bool = False,
        batch: Sequence[str] = (),
    ) -> _Held:
        """The lease for as long as the block runs. In one process a live holder cannot vanish
        without its exit running, so the lease is simply kept (no renewal timer); only a bare
        ``acquire`` that is never released runs out after ``ttl``."""
        return _Held(self, key, owner, ttl)

    def _take(self, key: str, owner: str) -> LeaseToken | None:
        """The uncontended case without awaiting: nobody holds or waits for ``key``."""
        if key in self._held or key in self._waiters:
            return None
        lease = LeaseToken(key, owner, math.inf, f"{next(self._tokens):x}")
        self._held[key] = lease
        return lease


class _Held:
    """`LocalTurnLock.hold` as a plain async context manager (no generator per turn)."""

    __slots__ = ("_key", "_lease", "_lock", "_owner", "_ttl")

    def __init__(self, lock: LocalTurnLock, key: str, owner: str, ttl: float) -> None:
        self._lock, self._key, self._owner, self._ttl = lock, key, owner, ttl
        self._lease: LeaseToken | None = None

    async def __aenter__(self) -> LeaseToken:
        lock = self._lock
        lease = lock._take(self._key, self._owner)
        if lease is None:
            acquired = await lock.acquire(self._key, owner=self._owner, ttl=self._ttl)
            lease = LeaseToken(self._key, self._owner, math.inf, acquired.token)
            lock._held[self._key] = lease
        self._lease = lease
        return lease

    async def __aexit__(self, *exc: object) -> None:
        if self._lease is not None:
            await self._lock.release(self._lease)


def build_lock(gateway: GatewaySection, clock: Clock, client: object = None) -> LocalTurnLock:
    return LocalTurnLock(clock)


class LocalLeases:
    """ChannelLeases for one process per state: every exclusive connection is this process's."""

    shared = False

    def __init__(self, replica: str) -> None:
        self.replica = replica
        self._held: set[str] = set()

    async def acquire(self, name: str, ttl: float, fence: float = 0.0) -> bool:
        self._held.add(name)
        return True

    async def renew(self, name: str, ttl: float) -> bool:
        return name in self._held

    async def release(self, name: str) -> None:
        self._held.discard(name)

    async def holders(self) -> dict[str, str]:
        return dict.fromkeys(sorted(self._held), self.replica)

    async def peers(self) -> list[str]:
        return [self.replica]
