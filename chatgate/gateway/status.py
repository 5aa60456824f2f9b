"""/api/status and `chatgate status`: a secret-free snapshot of the running gateway."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatgate import __version__
from chatgate.config.redact import scrub

if TYPE_CHECKING:
    from chatgate.gateway.app import Gateway


def _memory(gw: Gateway) -> dict[str, Any]:
    status = gw.memory.status()
    return {
        "rss_bytes": status.rss_bytes,
        "limit_bytes": status.limit_bytes,
        "ratio": status.ratio,
        "shedding": status.shedding,
        "evictions": gw.rt.cache.evictions,
    }


async def build_status(gw: Gateway) -> dict[str, Any]:
    rt = gw.rt
    now = gw.clock.time()
    agents = []
    for name, cfg in gw.loaded.config.agents.items():
        agents.append({"name": name, "backend": cfg.backend, "model": getattr(cfg, "model", None)})
    data: dict[str, Any] = {
        "version": __version__,
        "pid_started_at": gw.started_at,
        "uptime_s": round(now - gw.started_at, 1),
        "ready": gw.readiness()[0],
        "draining": gw.draining,
        "http": {"host": gw.loaded.config.gateway.http.host, "port": gw.port},
        "channels": gw.channels.snapshot(),
        "agents": agents,
        "sessions": {
            "warm": len(rt.cache),
            "active_turns": gw.pipeline.scheduler.active,
            "queued": gw.pipeline.scheduler.queued,
            "evictions": rt.cache.evictions,
        },
        "dlq": {"entries": rt.dlq.size},
        "dead_targets": rt.dead.addresses(),
        "pairing": {"pending": await rt.pairing.pending_count(now)},
        "breaker": gw.channels.breaker_status(),
        "degraded": gw.degraded.to_list(),
        "memory": _memory(gw),
        "event_loop": gw.watchdog.snapshot(),
        "plugins": gw.events.plugins,
        "warnings": gw.loaded.warnings,
    }
    scrubbed: dict[str, Any] = scrub(data, gw.loaded.secrets)
    return scrubbed
