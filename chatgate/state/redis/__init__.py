"""The shared backend: every store on one Redis, so 2–N replicas and the CLI see one state.

Each daemon keeps a liveness key (`replica:<id>`, renewed every quarter of
`gateway.redis.lease_ttl_s` on a client of its own); the journal hands the open entries of a
replica whose key expired to the next replica that asks. The key is written when the process first
claims journal work (the daemon's start), never by an offline CLI that only reads or edits state.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from pathlib import Path

from redis.asyncio import Redis
from redis.exceptions import RedisError

from chatgate.config.models import GatewaySection
from chatgate.state.approvals import KV_NAME as APPROVALS
from chatgate.state.config_audit import KV_NAME as CONFIG_AUDIT
from chatgate.state.factory import SHARED_KV, Stores, StoreUnreachable
from chatgate.state.outage import OutageReporter
from chatgate.state.redis.approvals import RedisApprovals
from chatgate.state.redis.callbacks import RedisCallbacks
from chatgate.state.redis.client import (
    HEARTBEAT_CONNECTIONS,
    Keys,
    RedisShare,
    cancel_safe,
    connect,
    replica_id,
)
from chatgate.state.redis.config_audit import RedisConfigAudit
from chatgate.state.redis.dead_letters import RedisDeadLetters, RedisDeadTargets
from chatgate.state.redis.facts import RedisFacts
from chatgate.state.redis.journal import RedisJournal
from chatgate.state.redis.leases import RedisLeases
from chatgate.state.redis.pairing import RedisPairing
from chatgate.state.redis.pauses import RedisPauses
from chatgate.state.redis.personal import RedisPersonal
from chatgate.state.redis.sessions import RedisSessionStore

log = logging.getLogger("chatgate.redis")


class Liveness:
    """This replica's heartbeat key and the list of live peers."""

    def __init__(self, redis: Redis, keys: Keys, replica: str, ttl_s: float) -> None:
        self._redis = redis
        self._keys = keys
        self.replica = replica
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._every_s = ttl_s / 4
        self._task: asyncio.Task[None] | None = None

    async def beat(self) -> None:
        info = json.dumps({"replica": self.replica, "at": time.time()})
        key = self._keys("replica", self.replica)
        await cancel_safe(self._redis.set(key, info, px=self._ttl_ms))

    async def join(self) -> None:
        """Announce this process as a live replica (once) and keep the key fresh."""
        if self._task is None:
            await self.beat()
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        outage = OutageReporter(log, "replica heartbeat")
        while True:
            await asyncio.sleep(self._every_s)
            try:
                await self.beat()
                outage.ok()
            except RedisError as exc:
                outage.failed(exc)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            with contextlib.suppress(RedisError):
                await self._redis.delete(self._keys("replica", self.replica))


# How long an adopter waits, from a stalled sender's send mark, for that sender to record the
# send: the adoption alone takes up to one lease TTL, so this covers stalls up to ~3 TTL.
SEND_GRACE_TTLS = 3


def build_stores(gateway: GatewaySection, state_dir: Path) -> Stores:
    redis = connect(gateway)
    beats = connect(gateway, HEARTBEAT_CONNECTIONS)
    keys = Keys(gateway.redis_prefix())
    live = Liveness(beats, keys, replica_id(gateway), gateway.redis.lease_ttl_s)

    async def open_all() -> None:
        try:
            await redis.ping()
        except (RedisError, OSError) as exc:
            kwargs = redis.connection_pool.connection_kwargs
            where = f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"
            key = "gateway.store.url" if gateway.store.url else "gateway.redis.url"
            raise StoreUnreachable(
                f"{key}: cannot reach Redis at {where} ({type(exc).__name__}); exit 75, retry later"
            ) from None

    async def close_all() -> None:
        await live.stop()
        await redis.aclose()
        await beats.aclose()

    return Stores(
        journal=RedisJournal(
            redis,
            keys,
            live.replica,
            live.join,
            send_grace_s=SEND_GRACE_TTLS * gateway.redis.lease_ttl_s,
        ),
        dead_letters=RedisDeadLetters(redis, keys),
        dead_targets=RedisDeadTargets(redis, keys),
        pairing=RedisPairing(redis, keys),
        callbacks=RedisCallbacks(redis, keys),
        sessions=RedisSessionStore(redis, keys),
        leases=RedisLeases(beats, keys, live.replica),
        facts=RedisFacts(redis, keys),
        pauses=RedisPauses(redis, keys),
        open=open_all,
        close=close_all,
        kv={
            SHARED_KV: RedisShare(redis, keys),
            APPROVALS: RedisApprovals(redis, keys),
            CONFIG_AUDIT: RedisConfigAudit(redis, keys),
        },
        client=redis,  # the turn lock and the job store share it: one pool per replica
        ping=lambda: cancel_safe(redis.ping()),
        personal=RedisPersonal(redis, keys),
    )
