"""The redis-py asyncio clients of a process, built from `gateway.store` / `gateway.redis`.

A replica has two: the data client, which every store, the turn lock and the job store share,
and the heartbeat client (replica liveness, channel leases), so a renewal never queues behind the
data traffic of a busy replica. Each has a small, bounded, *blocking* pool: a pool only dials when
all its connections are busy, so its size is the most a replica ever opens; under a burst a
command waits (up to ``COMMAND_TIMEOUT_S``) for a free connection instead of dialling another or
failing at once. Redis runs one command at a time, so more connections than commands a replica
has in flight would add sockets, not throughput; no chatgate command blocks or holds a
connection across other awaits (no WATCH, no blocking pops), so a small pool cannot deadlock.
The web chat relay's subscription holds one data connection while it listens.

A command that fails with a connection error runs once more, at once, on the same connection
dialled anew: a Redis restart leaves every pooled connection closed by the server, and one the
pool hands out before its event loop has read that close would fail its first command (a turn's
lock left to the journal while a later message's took it). The command may run twice only when
Redis ran it and the connection broke before the reply: most writes are keyed sets and
compare-and-set scripts that a second run leaves as the first did (a journal record reads as a
duplicate then, as the platform's own retry would); a counter (budget usage, a DLQ id) can count
once more. A timeout is not retried.

The URL carries the password, so it is never logged: errors name only the key prefix.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import os
import socket
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from chatgate.config.models import GatewaySection
from chatgate.model.errors import StateUnavailable

CONNECT_TIMEOUT_S = 2.0
COMMAND_TIMEOUT_S = 5.0
DATA_CONNECTIONS = 16
LOCK_CONNECTIONS = 8  # a turn lock on a client of its own (its stores are not on Redis)
HEARTBEAT_CONNECTIONS = 4

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C", bound=type)


def connect(gateway: GatewaySection, max_connections: int = DATA_CONNECTIONS) -> Redis:
    """A lazily connecting client (nothing is dialled until the first command)."""
    pool = BlockingConnectionPool.from_url(
        gateway.redis_url(),
        max_connections=max_connections,
        timeout=COMMAND_TIMEOUT_S,
        decode_responses=True,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        socket_timeout=COMMAND_TIMEOUT_S,
        health_check_interval=30,
        retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
    )
    return Redis.from_pool(pool)  # the client owns the pool: aclose() closes both


def replica_id(gateway: GatewaySection) -> str:
    """This process's name among the replicas (config, else hostname-pid)."""
    return gateway.redis.replica_id or f"{socket.gethostname()}-{os.getpid()}"


async def cancel_safe(command: Awaitable[R]) -> R:
    """Await a Redis command so that cancelling the caller always raises ``CancelledError``.

    redis-py 8's blocking pool sometimes absorbs a cancellation that lands while a command takes
    or returns its connection (about 2 % of cancels in a tight loop); a task that ends only by
    being cancelled (a heartbeat, a lease wait) then ran on after shutdown and hung it. The
    command runs as a task of its own behind a shield; a cancelled caller cancels it too.
    """
    task = asyncio.ensure_future(command)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.cancel()
        task.add_done_callback(_retrieve)
        raise


async def listen(
    redis: Redis, channel: str, on_message: Callable[[str], None], subscribed: Callable[[], None]
) -> None:
    """Hand each message published on ``channel`` to ``on_message``, until cancelled; a Redis
    error is raised (the caller resubscribes). ``subscribed`` is called once the subscription
    holds. Every read goes through ``cancel_safe``: a listener is a loop that ends only by being
    cancelled, so an absorbed cancellation would keep it (and a shutdown waiting for it) forever."""
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    try:
        await cancel_safe(pubsub.subscribe(channel))
        subscribed()
        while True:
            message = await cancel_safe(pubsub.get_message(timeout=None))
            if message is not None and message.get("type") == "message":
                on_message(str(message["data"]))
    finally:
        with contextlib.suppress(RedisError, OSError):
            await cancel_safe(pubsub.aclose())


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read an abandoned command's outcome, so asyncio does not report it as never retrieved."""
    if not task.cancelled():
        task.exception()


def unavailable(
    what: str,
) -> Callable[[Callable[P, Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, R]]]:
    """Re-raise a Redis error of the decorated call as ``StateUnavailable`` (what the gateway
    refuses work on, like a full disk), naming only ``what`` and the error type."""

    def wrap(call: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
        @functools.wraps(call)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return await call(*args, **kwargs)
            except RedisError as exc:
                raise StateUnavailable(f"{what}: redis unreachable ({type(exc).__name__})") from exc

        return guarded

    return wrap


def maps_errors(what: str) -> Callable[[C], C]:
    """Class decorator: every coroutine method the class defines raises ``StateUnavailable``
    instead of a Redis error, so each Redis-backed store fails the way the gateway handles
    (refuse and release the message) rather than with an error nobody maps."""

    def wrap(cls: C) -> C:
        for name, member in list(vars(cls).items()):
            if inspect.iscoroutinefunction(member):
                setattr(cls, name, unavailable(what)(member))
        return cls

    return wrap


class Keys:
    """Every Redis key chatgate writes, under one prefix (so one Redis can host several)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __call__(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)


@dataclass(frozen=True)
class RedisShare:
    """The replica's Redis client and key space, for a channel that keeps a store of its own on
    it (``ChannelContext.kv["redis"]``): the channel's folder owns the store, state owns the pool."""

    client: Redis
    keys: Keys
