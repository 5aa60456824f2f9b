"""`python -m bench.budget_overhead`: what accounting and a spend budget cost per turn.

The in-process pipeline (real Gateway, memory channel, litellm agent on the fake model served by
another process, so its work is not counted), one message at a time, on SQLite and on Redis.
Each backend runs twice: without `budgets:` (accounting for metrics and the journal only) and
with one user rule, which admits and settles every model call in the store. Reported: process
CPU and wall time per turn after a warm-up, and the ratio with/without (goal <= 1.05).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from bench.scenarios.pipeline import WARMUP_TURNS, _config, _daemon_logging
from chatgate.channels.registry import ChannelRegistry
from chatgate.config.loader import load_config
from chatgate.gateway.builder import GatewayBuilder
from tests.fakes.memory_channel import MemoryChannel

RULE = {"name": "bench", "scope": "user", "limit_usd": 1e6, "warn_at": None}


@contextmanager
def fake_model() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.llm"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        port = proc.stdout.readline().split()[-1]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait()


def _configure(
    workdir: Path, base_url: str, backend: str, budget: bool, db: int, prefix: str
) -> Path:
    path = _config(workdir)
    document: dict[str, Any] = yaml.safe_load(path.read_text())
    document["agents"] = {
        "default": {
            "backend": "litellm",
            "model": "openai/fake-model",
            "api_base": base_url,
            "api_key": "sk-bench",
            "price": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},
        }
    }
    if backend == "redis":
        url = f"redis://127.0.0.1:6379/{db}"
        document["gateway"]["store"] = {"backend": "redis", "url": url, "key_prefix": prefix}
    if budget:
        document["budgets"] = [RULE]
    path.write_text(yaml.safe_dump(document))
    return path


async def per_turn(path: Path, turns: int) -> tuple[float, float]:
    """(CPU s, wall s) per turn of the gateway process."""
    registry = ChannelRegistry()
    registry.register("memory", MemoryChannel)
    loaded = load_config(path, env={}, catalog=registry)
    gateway = GatewayBuilder(loaded).registry(registry).env({}).build()
    with _daemon_logging(path.parent / "gateway.log"):
        await gateway.start()
        try:
            channel = gateway.channels.adapters["memory"]
            assert isinstance(channel, MemoryChannel)
            for i in range(WARMUP_TURNS):
                await (await channel.inject(f"warm {i}", chat_id="warm")).result
            cpu, wall = time.process_time(), time.perf_counter()
            for i in range(turns):
                result = await (await channel.inject(f"t{i}", chat_id=f"c{i % 10}")).result
                assert result.reason == "text", result
            return (time.process_time() - cpu) / turns, (time.perf_counter() - wall) / turns
        finally:
            await gateway.stop()


async def measure(turns: int, reps: int, backends: list[str], db: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with fake_model() as base_url, tempfile.TemporaryDirectory() as scratch:
        for backend in backends:
            runs: dict[str, list[tuple[float, float]]] = {"without": [], "with": []}
            for rep in range(reps):
                for label, budget in (("without", False), ("with", True)):
                    workdir = Path(scratch) / f"{backend}-{label}-{rep}"
                    prefix = f"bench-budgets-{uuid.uuid4().hex[:8]}:"  # a fresh journal each run
                    path = _configure(workdir, base_url, backend, budget, db, prefix)
                    try:
                        runs[label].append(await per_turn(path, turns))
                    finally:
                        if backend == "redis":
                            await _drop(db, prefix)
            best = {k: (min(c for c, _ in v), min(w for _, w in v)) for k, v in runs.items()}
            out[backend] = {
                "cpu_ms_without": round(best["without"][0] * 1000, 3),
                "cpu_ms_with": round(best["with"][0] * 1000, 3),
                "wall_ms_without": round(best["without"][1] * 1000, 3),
                "wall_ms_with": round(best["with"][1] * 1000, 3),
                "cpu_ratio": round(best["with"][0] / best["without"][0], 3),
                "wall_ratio": round(best["with"][1] / best["without"][1], 3),
            }
    return out


async def _drop(db: int, prefix: str) -> None:
    from redis.asyncio import Redis

    client = Redis.from_url(f"redis://127.0.0.1:6379/{db}")
    try:
        keys = [key async for key in client.scan_iter(match=prefix + "*", count=1000)]
        for start in range(0, len(keys), 500):
            await client.delete(*keys[start : start + 500])
    finally:
        await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.budget_overhead")
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,redis")
    parser.add_argument("--redis-db", type=int, default=15, help="a Redis db it may flush")
    args = parser.parse_args()
    result = asyncio.run(measure(args.turns, args.reps, args.backends.split(","), args.redis_db))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
