"""One redis-py asyncio client per process, built from `gateway.store` / `gateway.redis`.

The URL carries the password, so it is never logged: errors name only the key prefix.
"""

from __future__ import annotations

import os
import socket

from redis.asyncio import Redis

from chatgate.config.models import GatewaySection

CONNECT_TIMEOUT_S = 2.0
COMMAND_TIMEOUT_S = 5.0


def connect(gateway: GatewaySection) -> Redis:
    """A lazily connecting client (nothing is dialled until the first command)."""
    return Redis.from_url(
        gateway.redis_url(),
        decode_responses=True,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        socket_timeout=COMMAND_TIMEOUT_S,
        health_check_interval=30,
    )


def replica_id(gateway: GatewaySection) -> str:
    """This process's name among the replicas (config, else hostname-pid)."""
    return gateway.redis.replica_id or f"{socket.gethostname()}-{os.getpid()}"


class Keys:
    """Every Redis key chatgate writes, under one prefix (so one Redis can host several)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __call__(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)
