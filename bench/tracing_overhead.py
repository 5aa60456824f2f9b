"""`python -m bench.tracing_overhead`: CPU per message with tracing off and on (100 % sampling).

The in-process pipeline (real Gateway, memory channel, SQLite), one message at a time, for two
kinds of message: a model turn (the litellm agent against the fake model served by another
process, so its work is not counted; the goal is judged on this one) and an echo turn (almost
no work of its own, so the spans dominate: the worst case). Process CPU (event loop, SQLite and
exporter threads) per message after a warm-up. "On" exports over OTLP/HTTP to a sink in another
process that answers 200 and keeps nothing, so its work is not counted either. Off vs before is
estimated: the no-op calls a message makes while tracing is off (counted) times their measured
cost, as a share of the CPU per message.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import yaml

from bench.budget_overhead import fake_model
from bench.scenarios.pipeline import WARMUP_TURNS, _config, _daemon_logging
from chatgate import tracing
from chatgate.channels.registry import ChannelRegistry
from chatgate.config.loader import load_config
from chatgate.gateway.app import Gateway
from chatgate.gateway.builder import GatewayBuilder
from tests.fakes.memory_channel import MemoryChannel

SINK = """
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200); self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


@contextlib.contextmanager
def sink() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield f"http://127.0.0.1:{proc.stdout.readline().strip()}"
    finally:
        proc.terminate()
        proc.wait()


def _configure(workdir: Path, endpoint: str | None, model: str | None) -> Path:
    """The bench gateway: echo, or the litellm agent on the fake model at ``model``; exporting
    every span to ``endpoint`` when given."""
    path = _config(workdir)
    document = yaml.safe_load(path.read_text())
    if endpoint is not None:
        document["telemetry"] = {"otlp_endpoint": endpoint, "sample_ratio": 1.0}
    if model is not None:
        document["agents"] = {
            "default": {
                "backend": "litellm",
                "model": "openai/fake-model",
                "api_base": model,
                "api_key": "sk-bench",
            }
        }
    path.write_text(yaml.safe_dump(document))
    return path


@contextlib.asynccontextmanager
async def warmed_gateway(
    workdir: Path, endpoint: str | None, model: str | None, env: dict[str, str]
) -> AsyncIterator[tuple[Gateway, MemoryChannel]]:
    """The in-process gateway on the memory channel, started and past its warm-up turns;
    stopped on exit (which flushes the last span batch)."""
    path = _configure(workdir, endpoint, model)
    registry = ChannelRegistry()
    registry.register("memory", MemoryChannel)
    loaded = load_config(path, env={}, catalog=registry)
    gateway = GatewayBuilder(loaded).registry(registry).env(env).build()
    with _daemon_logging(workdir / "gateway.log"):
        await gateway.start()
        try:
            channel = gateway.channels.adapters["memory"]
            assert isinstance(channel, MemoryChannel)
            assert tracing.on() is (endpoint is not None)
            for i in range(WARMUP_TURNS):
                await (await channel.inject(f"warm {i}", chat_id="warm")).result
            yield gateway, channel
        finally:
            await gateway.stop()


async def cpu_per_message(
    workdir: Path, turns: int, endpoint: str | None, model: str | None = None
) -> float:
    async with warmed_gateway(workdir, endpoint, model, {}) as (_, channel):
        started = time.process_time()
        for i in range(turns):
            result = await (await channel.inject(f"t{i}", chat_id=f"c{i % 10}")).result
            assert result.reason == "text", result
        return (time.process_time() - started) / turns


def noop_calls_per_message(workdir: Path, model: str | None) -> Counter[str]:
    """How often a message calls each tracing helper while tracing is off."""
    counts: Counter[str] = Counter()
    names = ("span", "within", "start_message", "ids", "keyed", "current")
    originals = {n: getattr(tracing, n) for n in names}

    def counting(name: str, fn: object) -> object:
        def wrapper(*args: object, **kwargs: object) -> object:
            counts[name] += 1
            return fn(*args, **kwargs)  # type: ignore[operator]

        return wrapper

    for name, fn in originals.items():
        setattr(tracing, name, counting(name, fn))
    try:
        asyncio.run(cpu_per_message(workdir, 100, None, model))
    finally:
        for name, fn in originals.items():
            setattr(tracing, name, fn)
    return Counter({k: round(v / (100 + WARMUP_TURNS)) for k, v in counts.items()})


def noop_cost_s() -> dict[str, float]:
    def span() -> None:
        with tracing.span("x", a=1):
            pass

    def within() -> None:
        with tracing.within("k"):
            pass

    def timeline() -> None:  # a turn's `current()`: its timeline, a mark per step, closed
        steps = tracing.Timeline.of(tracing.current(), time.monotonic)
        for name in ("open", "prepare", "prepare_input", "call_agent", "conclude", "deliver"):
            steps.mark(name)
        steps.close()

    n = 200_000
    return {
        "span": min(timeit.repeat(span, number=n, repeat=3)) / n,
        "within": min(timeit.repeat(within, number=n, repeat=3)) / n,
        "start_message": min(
            timeit.repeat(lambda: tracing.start_message("k", "m"), number=n, repeat=3)
        )
        / n,
        "ids": min(timeit.repeat(tracing.ids, number=n, repeat=3)) / n,
        "keyed": min(timeit.repeat(lambda: tracing.keyed("r", "k"), number=n, repeat=3)) / n,
        "current": min(timeit.repeat(timeline, number=n, repeat=3)) / n,
    }


def compare(
    work: Path, turns: int, reps: int, url: str, model: str | None
) -> tuple[list[float], list[float]]:
    """CPU per message off and on, in short alternating runs (drift on a busy machine hits
    both)."""
    off: list[float] = []
    on: list[float] = []
    for rep in range(reps):
        off.append(asyncio.run(cpu_per_message(work / f"off{rep}", turns, None, model)))
        on.append(asyncio.run(cpu_per_message(work / f"on{rep}", turns, url, model)))
    return off, on


def report(label: str, off: list[float], on: list[float]) -> None:
    off_m, on_m = statistics.median(off), statistics.median(on)
    pairs = statistics.median(b / a for a, b in zip(off, on, strict=True))
    print(
        f"{label}: CPU per message off: median {off_m * 1e6:,.0f} µs, least {min(off) * 1e6:,.0f}"
    )
    print(f"{label}: CPU per message on:  median {on_m * 1e6:,.0f} µs, least {min(on) * 1e6:,.0f}")
    print(
        f"{label}: on / off {pairs:.3f}x median of pairs, {min(on) / min(off):.3f}x least to least"
        "  (goal <= 1.05x on the model turn)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tracing_overhead", description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--agents", default="model,echo", help="which turns: model, echo or both")
    args = parser.parse_args(argv)
    kinds = args.agents.split(",")
    with (
        tempfile.TemporaryDirectory(prefix="chatgate-tracing-") as scratch,
        sink() as url,
        fake_model() as model,
    ):
        work = Path(scratch)
        runs = {
            kind: compare(
                work / kind, args.turns, args.reps, url, model if kind == "model" else None
            )
            for kind in kinds
        }
        calls = noop_calls_per_message(work / "count", model if "model" in kinds else None)
    for kind, (off, on) in runs.items():
        report(f"{kind} turn", off, on)
    cost = noop_cost_s()
    noop = sum(cost[name] * count for name, count in calls.items())
    print(f"no-op calls per message while off: {dict(calls)}; their cost {noop * 1e6:.2f} µs")
    for kind, (off, _) in runs.items():
        off_m = statistics.median(off)
        print(
            f"{kind} turn: off / before (estimated) {off_m / (off_m - noop):.4f}x  (goal <= 1.01x)"
        )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
