"""Scenario 1, pipeline: the whole in-process message path with durable SQLite persistence.

chatgate: a real Gateway (journal, admission, session queue, turn, persistence, delivery) with the
echo agent and the in-memory channel. Floor: the same channel calling the echo agent directly.
Latency is measured from just before the inbound message is built to the channel's send call.

Two shapes of load: waves (every message of a wave submitted at once, the next wave when all
are answered: throughput, and a median that includes waiting for half the wave) and an open loop
(one message every 1/rate s whatever is still running, latency from its due time: the overhead
a message sees at a steady arrival rate below capacity, with no wave to queue behind). Both sides
run on the benchmark daemons' event loop (`--event-loop`, default auto: uvloop).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench import configs
from bench.runner import Context, Outcome
from bench.stats import Spec, Table, latency_ms
from chatgate.agents.base import Turn
from chatgate.agents.echo import EchoAgent
from chatgate.channels.base import ChannelContext, Rendered
from chatgate.channels.registry import ChannelRegistry
from chatgate.config.agent_models import EchoAgentConfig
from chatgate.config.loader import load_config
from chatgate.gateway.builder import GatewayBuilder
from chatgate.gateway.http.app import DynamicRoutes
from chatgate.gateway.logs import setup_logging
from chatgate.gateway.process.event_loop import loop_factory
from chatgate.model.chat import ChatMessage
from chatgate.model.messages import InboundMessage, default_target
from chatgate.model.results import Submission
from tests.fakes.memory_channel import MemoryChannel, MemoryChannelConfig

WAVE_MAX = 1000
WARMUP_TURNS = 50
RUN_TIMEOUT_S = 120.0
OPEN_RATE = 1000.0  # messages/s of the open-loop loads: a busy gateway, below its capacity


@dataclass(frozen=True)
class Load:
    """``turns`` messages over ``sessions`` chats: in waves, or at ``rate`` per second."""

    sessions: int
    turns: int
    rate: float | None = None

    @property
    def wave(self) -> int:
        return min(self.sessions, WAVE_MAX)

    @property
    def key(self) -> str:
        return f"{self.sessions}" if self.rate is None else f"{self.sessions}_at_{self.rate:.0f}"


@dataclass(frozen=True)
class Run:
    turns_per_s: float
    latencies_s: list[float]


def loads(ctx: Context) -> list[Load]:
    if ctx.quick:
        return [Load(1, 200), Load(100, 500), Load(1_000, 1_000), Load(100, 500, OPEN_RATE)]
    return [
        Load(1, 1_500),
        Load(100, 4_000),
        Load(10_000, 10_000),
        Load(100, 4_000, OPEN_RATE),
        Load(10_000, 4_000, OPEN_RATE),
    ]


# Issue targets for the overhead a message sees with 100 and 10,000 sessions, read on the open
# loop: a wave's median includes waiting for half the wave, whatever the gateway does.
OPEN_TARGETS = {100: (5.0, 15.0), 10_000: (20.0, None)}


def specs(load: Load) -> tuple[Spec, Spec, Spec]:
    n, key = load.sessions, load.key
    one = n == 1
    label = f"{n:,} session{'s' if n > 1 else ''}"
    if load.rate is not None:
        label = f"{label} at {load.rate:,.0f}/s (open loop)"
    p50_goal, p99_goal = OPEN_TARGETS.get(n, (None, None)) if load.rate else (None, None)
    if one:
        p99_goal = 2.0
    return (
        Spec(f"turns_per_s_{key}", f"{label}: turns/s", "1/s", "higher", 5000.0 if one else None),
        Spec(f"overhead_p50_ms_{key}", f"{label}: overhead p50", "ms", "lower", p50_goal),
        Spec(f"overhead_p99_ms_{key}", f"{label}: overhead p99", "ms", "lower", p99_goal),
    )


async def scenario(ctx: Context) -> Outcome:
    table = Table()
    for rep in range(ctx.reps):
        for load in loads(ctx):
            workdir = ctx.scratch(f"pipeline/rep{rep}/s{load.key}")
            gate = await asyncio.to_thread(on_daemon_loop, _chatgate, workdir, load)
            floor = await asyncio.to_thread(on_daemon_loop, _floor, workdir, load)
            tps, p50, p99 = specs(load)
            table.add(tps, gate.turns_per_s, floor.turns_per_s)
            g50, g99 = latency_ms(gate.latencies_s)
            f50, f99 = latency_ms(floor.latencies_s)
            table.add(p50, g50, f50)
            table.add(p99, g99, f99)
    params = {
        "loads": [
            {"sessions": x.sessions, "turns": x.turns}
            | ({"wave": x.wave} if x.rate is None else {"open_loop_per_s": x.rate})
            for x in loads(ctx)
        ],
        "persistence": "sqlite, synchronous=normal (WAL)",
        "logging": "info, JSON lines to a file (as the daemon logs)",
        "event_loop": f"{configs.EVENT_LOOP}, both sides",
        "reps": ctx.reps,
    }
    return Outcome(table, params)


async def _no_hook() -> None:
    return None


@dataclass(frozen=True)
class Probe:
    """How a side is watched: ``hook`` is awaited after its warm-up and again after its load
    (`python -m bench.instructions pipeline` counts instructions in between); ``clock`` times
    the load and each latency (`time.process_time`: CPU seconds of the whole process, a proxy
    that other processes on a loaded machine barely move)."""

    hook: Callable[[], Awaitable[None]] = _no_hook
    clock: Callable[[], float] = time.monotonic


WALL = Probe()


def on_daemon_loop(
    run: Callable[[Path, Load, Probe], Awaitable[Run]],
    workdir: Path,
    load: Load,
    probe: Probe = WALL,
) -> Run:
    """``run`` on a fresh event loop of the kind the benchmark daemons use (blocks)."""
    with asyncio.Runner(loop_factory=loop_factory(configs.EVENT_LOOP)) as runner:
        return runner.run(run(workdir, load, probe))


def _config(workdir: Path) -> Path:
    document = {
        "config_version": 1,
        "gateway": {
            "http": {"host": "127.0.0.1", "port": 0},
            "state_dir": str(workdir / "state"),
            "rate_limits": {"per_sender": None, "per_chat": None},
            "sessions": {"warm_max": 20_000},
            "store": {"backend": "sqlite", "synchronous": "normal"},
            "event_loop": configs.EVENT_LOOP,
        },
        "agents": {"default": {"backend": "echo"}},
        "channels": {"memory": {"dm_policy": "open"}},
    }
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "gateway.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


@contextlib.contextmanager
def _daemon_logging(path: Path) -> Iterator[None]:
    """Log exactly as the daemon does (info, JSON lines) but to a file."""
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    with path.open("a", encoding="utf-8") as stream:
        logs = setup_logging("info", "json", stream=stream)
        try:
            yield
        finally:
            logs.stop()
            for handler in list(root.handlers):
                root.removeHandler(handler)
            for handler in saved_handlers:
                root.addHandler(handler)
            root.setLevel(saved_level)


async def _drive(
    load: Load,
    one: Callable[[int], Awaitable[None]],
    clock: Callable[[], float],
    due: dict[int, float],
) -> float:
    """Run ``load.turns`` calls of ``one``: sequentially, concurrently in waves, or one every
    1/rate s (each call's due time into ``due``, from which its latency counts); returns s."""
    started = clock()
    async with asyncio.timeout(RUN_TIMEOUT_S):
        if load.rate is not None:
            await _open_loop(load, one, clock, due)
        elif load.wave == 1:
            for i in range(load.turns):
                await one(i)
        else:
            for first in range(0, load.turns, load.wave):
                last = min(load.turns, first + load.wave)
                await asyncio.gather(*(one(i) for i in range(first, last)))
    return clock() - started


async def _open_loop(
    load: Load,
    one: Callable[[int], Awaitable[None]],
    clock: Callable[[], float],
    due: dict[int, float],
) -> None:
    """Start call i at its due time, t0 + i/rate, without waiting for earlier ones: a late
    start counts in that message's latency (no coordinated omission)."""
    assert load.rate is not None
    t0 = clock()
    running: list[asyncio.Future[None]] = []
    for i in range(load.turns):
        due[i] = t0 + i / load.rate
        ahead = due[i] - clock()
        if ahead > 0:
            await asyncio.sleep(ahead)
        running.append(asyncio.ensure_future(one(i)))
    await asyncio.gather(*running)


def _timed_sends(channel: MemoryChannel, clock: Callable[[], float]) -> dict[str, float]:
    """When each text was sent, on ``clock`` (filled in as the channel sends)."""
    at: dict[str, float] = {}
    channel.after_send = lambda: at.__setitem__(channel.sent[-1].text, clock())
    return at


def _latencies(
    channel: MemoryChannel, sent_at: dict[str, float], sent_t0: dict[str, float], turns: int
) -> list[float]:
    if len(channel.sent) != turns or len(sent_at) != turns:
        raise RuntimeError(f"expected {turns} distinct sends, got {len(channel.sent)}")
    return [at - sent_t0[text] for text, at in sent_at.items()]


async def _chatgate(workdir: Path, load: Load, probe: Probe = WALL) -> Run:
    registry = ChannelRegistry()
    registry.register("memory", MemoryChannel)
    loaded = load_config(_config(workdir), env={}, catalog=registry)
    gateway = GatewayBuilder(loaded).registry(registry).env({}).build()
    with _daemon_logging(workdir / "gateway.log"):
        await gateway.start()
        try:
            channel = gateway.channels.adapters["memory"]
            assert isinstance(channel, MemoryChannel)
            for i in range(WARMUP_TURNS):
                await (await channel.inject(f"warm {i}", chat_id="warm")).result
            channel.sent.clear()
            t0: dict[str, float] = {}
            due: dict[int, float] = {}
            clock, sent_at = probe.clock, _timed_sends(channel, probe.clock)

            async def one(i: int) -> None:
                text, chat = f"t{i}", f"c{i % load.sessions}"
                t0[text] = due.get(i) or clock()
                submission = await channel.inject(text, chat_id=chat, sender_id=chat)
                await submission.result

            await probe.hook()
            elapsed = await _drive(load, one, clock, due)
            await probe.hook()
            return Run(load.turns / elapsed, _latencies(channel, sent_at, t0, load.turns))
        finally:
            await gateway.stop()


class _NoMetrics:
    def count(self, metric: str, **labels: str) -> None:
        return None


class _NoSink:
    async def submit(self, msg: InboundMessage) -> Submission:
        raise RuntimeError("the floor has no pipeline")


async def _floor(workdir: Path, load: Load, probe: Probe = WALL) -> Run:
    ctx = ChannelContext(
        "memory", MemoryChannelConfig(dm_policy="open"), DynamicRoutes(), workdir, _NoMetrics()
    )
    channel = MemoryChannel(ctx)
    await channel.start(_NoSink())
    agent = EchoAgent("default", EchoAgentConfig(backend="echo"))
    t0: dict[str, float] = {}
    due: dict[int, float] = {}
    counter = itertools.count(1)
    clock = probe.clock

    async def one(i: int) -> None:
        text, chat = f"t{i}", f"c{i % load.sessions}"
        t0[text] = due.get(i) or clock()
        msg = InboundMessage(
            channel="memory",
            platform="memory",
            chat_id=chat,
            chat_kind="direct",
            sender_id=chat,
            message_id=f"m{next(counter)}",
            text=text,
            received_at=time.time(),
        )
        turn = Turn(session=f"default:memory:{chat}", history=(), new=[ChatMessage("user", text)])
        reply = await agent.run(turn)
        await channel.send(default_target(msg), Rendered(reply.text))

    for i in range(WARMUP_TURNS):
        await one(-1 - i)
    channel.sent.clear()
    t0.clear()
    sent_at = _timed_sends(channel, clock)
    await probe.hook()
    elapsed = await _drive(load, one, clock, due)
    await probe.hook()
    await channel.stop()
    return Run(load.turns / elapsed, _latencies(channel, sent_at, t0, load.turns))


async def _handshake() -> None:
    """Say where the side is on stdout and wait for a line on stdin (the driver counts
    instructions in between)."""
    print("at", flush=True)
    await asyncio.to_thread(sys.stdin.readline)


def main(argv: list[str] | None = None) -> None:
    """One side of the scenario in this process (``--pause``: paused after its warm-up and
    after its load, for `python -m bench.instructions pipeline`); prints turns/s and the
    latency p50/p99, on the wall clock or in CPU seconds of the process (``--clock process``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.scenarios.pipeline")
    parser.add_argument("--side", choices=["chatgate", "floor"], required=True)
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--rate", type=float, help="open loop: messages per second")
    parser.add_argument("--workdir", type=Path, help="a fresh directory is made in it")
    parser.add_argument("--clock", choices=["wall", "process"], default="wall")
    parser.add_argument("--pause", action="store_true")
    args = parser.parse_args(argv)
    run = _chatgate if args.side == "chatgate" else _floor
    clock = time.process_time if args.clock == "process" else time.monotonic
    probe = Probe(_handshake if args.pause else _no_hook, clock)
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pipeline-", dir=args.workdir) as scratch:
        # a fresh state dir: the journal would take a reused one's message ids for redeliveries
        done = on_daemon_loop(run, Path(scratch), Load(args.sessions, args.turns, args.rate), probe)
    p50, p99 = latency_ms(done.latencies_s)
    unit = "per CPU-second" if args.clock == "process" else "per second"
    print(f"turns {done.turns_per_s:,.0f} {unit}; latency p50 {p50:.3f} ms, p99 {p99:.3f} ms")


if __name__ == "__main__":
    main()
