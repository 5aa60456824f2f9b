"""Scenario 3, webhook: a signed sync route under concurrency 32, vs a bare aiohttp HMAC handler.

chatgate: `signature: generic`, echo agent, no `session:` (one-shot sessions), `respond: sync`, so
every request is journaled, runs a turn and persists before the response. Floor: a separate
process that verifies the same HMAC and answers a constant. The client is aiohttp in this process,
bodies and signatures are prepared before the clock starts. The floor, then chatgate, start one at a
time and answer one request the moment they are ready (first reply after ready).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass

import aiohttp

from bench.configs import HOOK_PATH, WEBHOOK_SECRET, DaemonConfig
from bench.procs import (
    PYTHON,
    AnnouncedProc,
    BenchError,
    daemon,
    free_port,
    started,
    wait_ready,
)
from bench.runner import Context, Outcome
from bench.scenarios import first_reply
from bench.stats import Spec, Table, latency_ms
from chatgate.channels.signatures import sign

CONCURRENCY = 32
WARMUP_REQUESTS = 200
LOAD_TIMEOUT_S = 120.0

RATE = Spec("req_per_s", "signed sync route: req/s", "1/s", "higher")
P50 = Spec("p50_ms", "request p50", "ms", "lower")
P99 = Spec("p99_ms", "request p99", "ms", "lower")
ERRORS = Spec("errors", "failed answers (not 200 text)", "", "lower", 0.0)
FIRST = first_reply.spec("/readyz; floor: listening")


@dataclass(frozen=True)
class Load:
    req_per_s: float
    latencies_s: list[float]
    errors: int


def requests(count: int, tag: str) -> list[tuple[bytes, dict[str, str]]]:
    """Distinct signed bodies (so dedupe never short-cuts a request), each with its own id."""
    out = []
    for i in range(count):
        body = json.dumps({"text": f"{tag} request {i}"}).encode()
        headers = sign("generic", WEBHOOK_SECRET, body, time.time())
        headers.update({"Content-Type": "application/json", "X-Request-Id": f"{tag}-{i}"})
        out.append((body, headers))
    return out


async def hammer(url: str, batch: list[tuple[bytes, dict[str, str]]], concurrency: int) -> Load:
    """POST every prepared request with ``concurrency`` keep-alive workers; bounded in time."""
    pending = iter(batch)
    latencies: list[float] = []
    errors = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:

        async def worker() -> None:
            nonlocal errors
            for body, headers in pending:
                began = time.perf_counter()
                async with session.post(url, data=body, headers=headers) as resp:
                    answer = await resp.read()
                    if resp.status != 200 or b'"reason_code": "text"' not in answer:
                        errors += 1
                latencies.append(time.perf_counter() - began)

        began = time.perf_counter()
        async with asyncio.timeout(LOAD_TIMEOUT_S):
            await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - began
    return Load(len(batch) / elapsed, latencies, errors)


async def timed_reply(
    http: aiohttp.ClientSession, url: str, ready_at: float, *, check: bool = False
) -> float:
    """Seconds from ``ready_at`` to the answer of one signed request sent now; ``check``: it must
    be chatgate's echo of it."""
    [(body, headers)] = requests(1, "check")
    async with http.post(url, data=body, headers=headers) as resp:
        data = await resp.json()
    answered = time.monotonic()
    if resp.status != 200 or (check and data.get("reply") != "check request 0"):
        raise BenchError(f"unexpected webhook answer from {url}: {resp.status} {data}")
    return answered - ready_at


async def scenario(ctx: Context) -> Outcome:
    count = ctx.pick(3_000, 300)
    workdir = ctx.scratch("webhook")
    port = free_port()
    config = DaemonConfig(port, webhook=True).write(workdir / "chatgate")
    floor_argv = [PYTHON, "-m", "bench.floors.hmac_echo", "--secret", WEBHOOK_SECRET]
    floor_argv += ["--path", HOOK_PATH]
    floor = AnnouncedProc("hmac-floor", floor_argv, workdir / "floor.log")
    table = Table()
    async with contextlib.AsyncExitStack() as stack:
        # One at a time, each answering a request the moment it is ready (the first-reply row).
        await stack.enter_async_context(started(floor))
        floor_url = f"http://127.0.0.1:{floor.port}{HOOK_PATH}"
        floor_first = await timed_reply(ctx.http, floor_url, floor.ready_at)
        gate = await stack.enter_async_context(started(daemon(config)))
        ready_at = await wait_ready(ctx.http, gate, port)
        gate_url = f"http://127.0.0.1:{port}{HOOK_PATH}"
        table.add(FIRST, await timed_reply(ctx.http, gate_url, ready_at, check=True), floor_first)
        for url in (gate_url, floor_url):
            await hammer(url, requests(WARMUP_REQUESTS, f"warm{url[-20:]}"), CONCURRENCY)
        for rep in range(ctx.reps):
            ours = await hammer(gate_url, requests(count, f"r{rep}"), CONCURRENCY)
            bare = await hammer(floor_url, requests(count, f"r{rep}"), CONCURRENCY)
            gate.check_alive()
            table.add(RATE, ours.req_per_s, bare.req_per_s)
            g50, g99 = latency_ms(ours.latencies_s)
            f50, f99 = latency_ms(bare.latencies_s)
            table.add(P50, g50, f50)
            table.add(P99, g99, f99)
            table.add(ERRORS, ours.errors, bare.errors)
    params = {
        "requests": count,
        "concurrency": CONCURRENCY,
        "route": "signature generic, echo agent, respond sync, one-shot sessions",
        "floor": "aiohttp handler: HMAC-SHA256 check + constant JSON (separate process)",
        "reps": ctx.reps,
    }
    return Outcome(table, params)
