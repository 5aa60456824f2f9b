"""Scenario 3, webhook: a signed sync route under concurrency 32, vs a bare aiohttp HMAC handler.

chatgate: `signature: generic`, echo agent, no `session:` (one-shot sessions), `respond: sync`, so
every request is journaled, runs a turn and persists before the response. Floor: a separate
process that verifies the same HMAC and answers a constant. The client is aiohttp in this process,
bodies and signatures are prepared before the clock starts.
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
    all_started,
    daemon,
    free_port,
    wait_ready,
)
from bench.runner import Context, Outcome
from bench.stats import Spec, Table, latency_ms
from chatgate.channels.signatures import sign

CONCURRENCY = 32
WARMUP_REQUESTS = 200
LOAD_TIMEOUT_S = 120.0

RATE = Spec("req_per_s", "signed sync route: req/s", "1/s", "higher")
P50 = Spec("p50_ms", "request p50", "ms", "lower")
P99 = Spec("p99_ms", "request p99", "ms", "lower")
ERRORS = Spec("errors", "failed answers (not 200 text)", "", "lower", 0.0)


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


async def check_reply(http: aiohttp.ClientSession, url: str) -> None:
    [(body, headers)] = requests(1, "check")
    async with http.post(url, data=body, headers=headers) as resp:
        data = await resp.json()
    if resp.status != 200 or data.get("reply") != "check request 0":
        raise BenchError(f"unexpected webhook answer from {url}: {resp.status} {data}")


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
        gate = daemon(config)
        await stack.enter_async_context(all_started(gate, floor))
        await wait_ready(ctx.http, gate, port)
        gate_url = f"http://127.0.0.1:{port}{HOOK_PATH}"
        floor_url = f"http://127.0.0.1:{floor.port}{HOOK_PATH}"
        await check_reply(ctx.http, gate_url)
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
