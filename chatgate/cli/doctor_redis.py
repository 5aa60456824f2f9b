"""`doctor` checks for the shared Redis: reachable, new enough, fast, persistent, and not evicting
our keys."""

from __future__ import annotations

import time

from chatgate.config.findings import Finding, Level
from chatgate.config.models import GatewaySection

MIN_VERSION = (6, 2)  # SET ... PX with GET-free NX, Lua scripts, SCAN MATCH
SLOW_MS = 20.0
PINGS = 5


async def check_redis(gateway: GatewaySection, offline: bool) -> list[Finding]:
    if not gateway.uses_redis:
        return [Finding("redis", Level.SKIP, "not used: SQLite store and in-process turn lock")]
    if offline:
        return [Finding("redis.ping", Level.SKIP, "--offline: Redis not contacted")]
    from redis.asyncio import Redis
    from redis.exceptions import RedisError

    client = Redis.from_url(
        gateway.redis_url(), decode_responses=True, socket_connect_timeout=3, socket_timeout=3
    )
    try:
        try:
            started = time.perf_counter()
            await client.ping()
            first_ms = (time.perf_counter() - started) * 1000
        except (RedisError, OSError) as exc:
            return [
                Finding(
                    "redis.ping",
                    Level.FAIL,
                    f"Redis does not answer ({type(exc).__name__}): turns fail closed with the "
                    "`unavailable` reply until it does",
                    "check gateway.store.url (or gateway.redis.url), the network and the password",
                )
            ]
        findings = [Finding("redis.ping", Level.OK, f"Redis answers ({first_ms:.1f} ms)")]
        info = await client.info("server")
        version = str(info.get("redis_version", "0"))
        parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
        if parts < MIN_VERSION:
            findings.append(
                Finding(
                    "redis.version",
                    Level.FAIL,
                    f"Redis {version} is older than {'.'.join(map(str, MIN_VERSION))}",
                    "upgrade Redis",
                )
            )
        else:
            findings.append(Finding("redis.version", Level.OK, f"Redis {version}"))
        samples = []
        for _ in range(PINGS):
            started = time.perf_counter()
            await client.ping()
            samples.append((time.perf_counter() - started) * 1000)
        worst = max(samples)
        level = Level.WARN if worst > SLOW_MS else Level.OK
        findings.append(
            Finding(
                "redis.latency",
                level,
                f"round trip {min(samples):.1f}–{worst:.1f} ms over {PINGS} pings",
                "put Redis next to the replicas; every turn makes several round trips"
                if level is Level.WARN
                else None,
            )
        )
        persistence = await client.info("persistence")
        try:
            saves = str((await client.config_get("save")).get("save", ""))
        except RedisError:  # CONFIG is often disabled on managed Redis
            saves = "?"
        findings.append(persistence_finding(str(persistence.get("aof_enabled", "0")), saves))
        try:
            got = await client.config_get("maxmemory-policy")
            policy = str(got.get("maxmemory-policy", "?"))
        except RedisError as exc:  # CONFIG is often disabled on managed Redis
            findings.append(
                Finding(
                    "redis.maxmemory_policy",
                    Level.WARN,
                    f"cannot read maxmemory-policy ({type(exc).__name__})",
                    "make sure the policy is noeviction",
                )
            )
            return findings
        if policy == "noeviction":
            findings.append(Finding("redis.maxmemory_policy", Level.OK, "noeviction"))
        else:
            findings.append(
                Finding(
                    "redis.maxmemory_policy",
                    Level.WARN,
                    f"maxmemory-policy is {policy}: under memory pressure Redis may evict "
                    "locks, leases, dedupe keys or transcripts",
                    "set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction)",
                )
            )
        return findings
    except (RedisError, OSError) as exc:
        return [Finding("redis", Level.FAIL, f"Redis failed mid-check ({type(exc).__name__})")]
    finally:
        await client.aclose()


PERSISTENCE_HINT = (
    "set appendonly yes (appendfsync everysec or always): a restart that loses data drops the "
    "journal (accepted messages go unanswered), the DLQ, transcripts and pairings"
)


def persistence_finding(aof_enabled: str, saves: str) -> Finding:
    """What a Redis restart would cost, from INFO's ``aof_enabled`` and CONFIG ``save``."""
    if aof_enabled == "1":
        return Finding("redis.persistence", Level.OK, "append-only file on")
    if saves == "?":
        detail = "append-only file off; cannot read the snapshot schedule (CONFIG disabled)"
    elif saves.strip():
        detail = f"snapshots only (save {saves}): a restart loses what came after the last one"
    else:
        detail = "no persistence: a restart loses every key"
    return Finding("redis.persistence", Level.WARN, detail, PERSISTENCE_HINT)
