"""/api/status and `chatgate status`: a secret-free snapshot of the running gateway."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from chatgate import __version__
from chatgate.config.redact import scrub
from chatgate.gateway.intake.session_queue import SessionScheduler
from chatgate.gateway.process.event_loop import implementation
from chatgate.gateway.runtime import Runtime
from chatgate.model.errors import StateUnavailable

T = TypeVar("T")


@dataclass
class Lifecycle:
    """Where the process is in its life (set by the Gateway, read by status and probes)."""

    started_at: float = 0.0
    ready: bool = False
    draining: bool = False
    port: int | None = None


def _memory(runtime: Runtime) -> dict[str, Any]:
    status = runtime.memory.status()
    return {
        "rss_bytes": status.rss_bytes,
        "limit_bytes": status.limit_bytes,
        "ratio": status.ratio,
        "shedding": status.shedding,
        "evictions": runtime.cache.evictions,
        "shed_ratio": runtime.config.gateway.memory.shed_ratio,
        "evict_ratio": runtime.config.gateway.memory.headroom_ratio,
    }


async def _stored(read: Awaitable[T], fallback: T, errors: list[str]) -> T:
    """A store read for the snapshot; while the store is away, ``fallback`` and the reason."""
    try:
        return await read
    except StateUnavailable as exc:
        errors.append(str(exc))
        return fallback


async def build_status(
    runtime: Runtime, scheduler: SessionScheduler, life: Lifecycle
) -> dict[str, Any]:
    """The snapshot; parts kept in the state store read as unknown (None) while it is away,
    with ``state_errors`` saying why, so status still answers during an outage."""
    now = runtime.clock.time()
    errors: list[str] = []
    pending = await _stored(runtime.pairing.pending(now), None, errors)
    config = runtime.loaded.config
    agents = [
        {"name": name, "backend": cfg.backend, "model": getattr(cfg, "model", None)}
        for name, cfg in config.agents.items()
    ]
    data: dict[str, Any] = {
        "version": __version__,
        "pid_started_at": life.started_at,
        "uptime_s": round(now - life.started_at, 1),
        "ready": life.ready and not life.draining,
        "draining": life.draining,
        "http": {"host": config.gateway.http.host, "port": life.port},
        "channels": runtime.channels.snapshot(),
        "agents": agents,
        "mcp_servers": runtime.tools.status() if runtime.tools is not None else [],
        "sessions": {
            "warm": len(runtime.cache),
            "active_turns": scheduler.active,
            "queued": scheduler.queued,
            "evictions": runtime.cache.evictions,
        },
        "dlq": {"entries": await _stored(runtime.dead_letters.count(), None, errors)},
        "dead_targets": await _stored(runtime.dead_targets.all(), {}, errors),
        "pairing": {"pending": None if pending is None else len(pending)},
        "breaker": runtime.channels.breaker_status(),
        "degraded": runtime.degraded.to_list(),
        "memory": _memory(runtime),
        "event_loop": {
            "implementation": implementation(asyncio.get_running_loop()),
            **runtime.watchdog.snapshot(),
        },
        "plugins": runtime.events.plugins,
        "warnings": runtime.loaded.warnings,
        "cluster": await _cluster(runtime),
    }
    if errors:
        data["state_errors"] = errors
    scrubbed: dict[str, Any] = scrub(data, runtime.loaded.secrets)
    return scrubbed


async def _cluster(runtime: Runtime) -> dict[str, Any]:
    """This replica, the exclusive connections it holds and the other live replicas."""
    leases = runtime.state.leases
    out: dict[str, Any] = {"replica": leases.replica, "shared": leases.shared}
    try:
        holders = await leases.holders()
        out["owned"] = sorted(n for n, r in holders.items() if r == leases.replica)
        out["leases"] = holders
        out["peers"] = [p for p in await leases.peers() if p != leases.replica]
    except Exception as exc:  # the store being down must not break status
        out["error"] = f"shared store unavailable ({type(exc).__name__})"
    return out
