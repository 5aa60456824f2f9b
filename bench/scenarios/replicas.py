"""Scenario replicas: three chatgate replicas on one Redis vs one replica on the same Redis.

Load: a signed sync webhook route keyed by ``payload.s`` (many sessions) on the litellm agent,
against the fake model with a small latency; the client round-robins its workers over the
replicas' ports. Same requests, same concurrency for both setups. In the table, "chatgate" is the
three-replica run and "floor" the one-replica run, so ``*_ratio`` is 3-replica / 1-replica.

Redis is a private ``redis-server`` on a free port (db 15, flushed before and after each run), so
its INFO counters see only this scenario: "commands per turn" counts every command of a pipeline
or MULTI/EXEC; "round trips per turn" is ``total_writes_processed`` (reply flushes), where a
pipeline counts once. Both include background traffic (lease heartbeats) during the load.
On a 2-core machine the three replicas share the same cores as the client and the fake model,
so the gain is capped well below 3×.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from redis.asyncio import Redis
from redis.exceptions import RedisError

from bench.configs import LLM_HOOK_PATH, WEBHOOK_SECRET, DaemonConfig
from bench.procs import BenchError, FakeLLMProc, Proc, daemon, free_port, started, wait_ready
from bench.procs import wait_until as wait_for
from bench.runner import Context, Outcome
from bench.scenarios import handoffs
from bench.stats import Spec, Table, latency_ms
from chatgate.channels.signatures import sign

REDIS_DB = 15
KEY_PREFIX = "bench:"
LLM_LATENCY_S = 0.05
LOAD_TIMEOUT_S = 240.0
# a request unanswered this long counts as lost (seen: sync turns that never finish)
REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=30.0)

RATE = Spec("msgs_per_s", "3 replicas vs 1: msgs/s", "1/s", "higher")
P50 = Spec("p50_ms", "request p50", "ms", "lower")
P99 = Spec("p99_ms", "request p99", "ms", "lower")
LOST = Spec("lost", "lost (no 200 / wrong reply)", "", "lower", 0.0)
DUPS = Spec("duplicated", "model calls beyond one per message", "", "lower", 0.0)
COMMANDS = Spec("redis_cmds_per_turn", "Redis commands per turn", "", "lower")
STUCK = Spec("stuck_turns", "turn locks still held after the load", "", "lower", 0.0)
ROUND_TRIPS = Spec(
    "redis_round_trips_per_turn", "Redis round trips (replies) per turn", "", "lower"
)


@dataclass(frozen=True)
class Load:
    msgs_per_s: float
    latencies_s: list[float]
    lost: int
    duplicated: int
    redis_cmds_per_turn: float
    redis_round_trips_per_turn: float
    commandstats: dict[str, int]
    failures: list[str]  # the first few lost answers: status and body head
    stuck_turns: int  # turn locks held once every request was answered (a turn that hangs)


def batch(count: int, sessions: int, tag: str) -> list[tuple[str, bytes, dict[str, str]]]:
    """(expected reply, signed body, headers) per message, spread over ``sessions`` sessions."""
    out = []
    for i in range(count):
        text = f"{tag} m{i}"
        body = json.dumps({"text": text, "s": f"{tag}-s{i % sessions}"}).encode()
        headers = sign("generic", WEBHOOK_SECRET, body, time.time())
        headers.update({"Content-Type": "application/json", "X-Request-Id": f"{tag}-{i}"})
        out.append((f"echo: {text}", body, headers))
    return out


async def command_counts(client: Redis) -> tuple[int, int, dict[str, int]]:
    """``total_commands_processed``, ``total_writes_processed`` (reply flushes: one per round
    trip, a pipeline or MULTI/EXEC batch counting once) and the per-command call counts."""
    stats = await client.info("stats")
    per = await client.info("commandstats")
    calls = {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in per.items()}
    return int(stats["total_commands_processed"]), int(stats["total_writes_processed"]), calls


async def hammer(
    urls: list[str],
    work: list[tuple[str, bytes, dict[str, str]]],
    concurrency: int,
    client: Redis,
    llm: FakeLLMProc,
    http: aiohttp.ClientSession,
) -> Load:
    """POST every message, worker ``i`` on ``urls[i % len(urls)]``; count Redis commands."""
    await llm.reset(http)
    total_before, writes_before, calls_before = await command_counts(client)
    pending = iter(work)
    latencies: list[float] = []
    lost = 0
    failures: list[str] = []
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:

        async def worker(url: str) -> None:
            nonlocal lost
            for expected, body, headers in pending:
                began = time.perf_counter()
                try:
                    async with session.post(
                        url, data=body, headers=headers, timeout=REQUEST_TIMEOUT
                    ) as resp:
                        answer, status = await resp.read(), resp.status
                except (TimeoutError, aiohttp.ClientError) as exc:
                    answer, status = repr(exc).encode(), 0
                latencies.append(time.perf_counter() - began)
                if status != 200 or json.loads(answer).get("reply") != expected:
                    lost += 1
                    if len(failures) < 5:
                        failures.append(f"{url} {status} {answer[:200]!r}")

        began = time.perf_counter()
        async with asyncio.timeout(LOAD_TIMEOUT_S):
            await asyncio.gather(*(worker(urls[i % len(urls)]) for i in range(concurrency)))
        elapsed = time.perf_counter() - began
    total_after, writes_after, calls_after = await command_counts(client)
    stuck = [str(k) async for k in client.scan_iter(match=f"{KEY_PREFIX}lock:*", count=1000)]
    model_calls = (await llm.stats(http))["requests"]
    delta = {k: v - calls_before.get(k, 0) for k, v in calls_after.items()}
    # the two INFO calls of the "before" sample run inside the window
    commands = total_after - total_before - 2
    round_trips = writes_after - writes_before - 2
    return Load(
        msgs_per_s=len(work) / elapsed,
        latencies_s=latencies,
        lost=lost,
        duplicated=max(0, model_calls - len(work)),
        redis_cmds_per_turn=commands / len(work),
        redis_round_trips_per_turn=round_trips / len(work),
        failures=failures,
        stuck_turns=len(stuck),
        commandstats={k: v for k, v in sorted(delta.items(), key=lambda kv: -kv[1]) if v > 0},
    )


@contextlib.asynccontextmanager
async def private_redis(workdir: Path) -> AsyncIterator[Redis]:
    """A throwaway redis-server (no persistence) on a free loopback port; db 15, flushed."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise BenchError("replicas scenario needs redis-server on PATH")
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly"]
    argv += ["no", "--dir", str(workdir)]
    client = Redis.from_url(f"redis://127.0.0.1:{port}/{REDIS_DB}", decode_responses=True)
    async with started(Proc("redis-server", argv, workdir / "redis.log")) as proc:

        async def answers() -> bool:
            try:
                return bool(await client.ping())
            except (RedisError, OSError):
                return False

        await wait_for(answers, 20.0, "redis-server PING", procs=[proc])
        try:
            yield client
        finally:
            with contextlib.suppress(RedisError, OSError):
                await client.flushdb()
            await client.aclose()


async def replicas(
    ctx: Context, stack: contextlib.AsyncExitStack, count: int, redis_url: str, llm_base: str
) -> list[str]:
    """Start ``count`` replicas (own state dirs and ports); returns their route URLs."""
    procs: list[tuple[Proc, int]] = []
    for n in range(count):
        port = free_port()
        extra = {
            "store": {"backend": "redis", "url": redis_url, "key_prefix": KEY_PREFIX},
            "turn_lock": {"backend": "redis"},
            "redis": {"replica_id": f"bench-{count}x-r{n}"},
        }
        directory = ctx.scratch(f"replicas/{count}x/r{n}")
        config = DaemonConfig(port, llm_base=llm_base, webhook=True, gateway_extra=extra)
        proc = daemon(config.write(directory))
        await stack.enter_async_context(started(proc))
        procs.append((proc, port))
    for proc, port in procs:
        await wait_ready(ctx.http, proc, port)
    return [f"http://127.0.0.1:{port}{LLM_HOOK_PATH}" for _, port in procs]


async def run_setup(
    ctx: Context, count: int, client: Redis, redis_url: str, llm: FakeLLMProc, size: int
) -> list[Load]:
    sessions, concurrency = ctx.pick(300, 30), ctx.pick(64, 16)
    await client.flushdb()
    loads = []
    async with contextlib.AsyncExitStack() as stack:
        urls = await replicas(ctx, stack, count, redis_url, llm.base_url)
        await hammer(urls, batch(ctx.pick(200, 30), sessions, f"w{count}"), concurrency, client,
                     llm, ctx.http)  # fmt: skip
        for rep in range(ctx.reps):
            work = batch(size, sessions, f"x{count}r{rep}")
            loads.append(await hammer(urls, work, concurrency, client, llm, ctx.http))
    await client.flushdb()
    return loads


async def scenario(ctx: Context) -> Outcome:
    size = ctx.pick(1_500, 120)
    workdir = ctx.scratch("replicas")
    table = Table()
    async with contextlib.AsyncExitStack() as stack:
        client = await stack.enter_async_context(private_redis(workdir))
        kwargs = client.connection_pool.connection_kwargs
        redis_url = f"redis://127.0.0.1:{kwargs['port']}/{REDIS_DB}"
        llm = await stack.enter_async_context(
            started(FakeLLMProc(workdir / "fake-llm.log", LLM_LATENCY_S))
        )
        one = await run_setup(ctx, 1, client, redis_url, llm, size)
        three = await run_setup(ctx, 3, client, redis_url, llm, size)
        moved = await handoffs.run(ctx, workdir, client, redis_url, KEY_PREFIX, llm, "move")
        stalled = await handoffs.run(ctx, workdir, client, redis_url, KEY_PREFIX, llm, "stall")
    for a, b in zip(three, one, strict=True):
        table.add(RATE, a.msgs_per_s, b.msgs_per_s)
        a50, a99 = latency_ms(a.latencies_s)
        b50, b99 = latency_ms(b.latencies_s)
        table.add(P50, a50, b50)
        table.add(P99, a99, b99)
        table.add(LOST, a.lost, b.lost)
        table.add(DUPS, a.duplicated, b.duplicated)
        table.add(STUCK, a.stuck_turns, b.stuck_turns)
        table.add(COMMANDS, a.redis_cmds_per_turn, b.redis_cmds_per_turn)
        table.add(ROUND_TRIPS, a.redis_round_trips_per_turn, b.redis_round_trips_per_turn)
    handoffs.add_rows(table, "move", moved)
    handoffs.add_rows(table, "stall", stalled)
    params: dict[str, Any] = {
        "messages": size,
        "sessions": ctx.pick(300, 30),
        "concurrency": ctx.pick(64, 16),
        "fake_llm_latency_s": LLM_LATENCY_S,
        "route": "signature generic, litellm agent, respond sync, session = payload.s",
        "chatgate": "3 replicas (store + turn lock on Redis), client round-robin over ports",
        "floor": "1 replica on the same Redis, same load",
        "redis": f"private redis-server, db {REDIS_DB}, flushed",
        "reps": ctx.reps,
        "handoffs": "2 Telegram replicas; each round the lease is moved (SET) or its holder "
        "frozen (SIGSTOP, 1.2 lease TTLs) mid-turn; see handoffs.py",
    }
    extra = {
        "commandstats_3x": three[-1].commandstats,
        "commandstats_1x": one[-1].commandstats,
        "failures_3x": [f for load in three for f in load.failures],
        "failures_1x": [f for load in one for f in load.failures],
    }
    return Outcome(table, params, extra)
