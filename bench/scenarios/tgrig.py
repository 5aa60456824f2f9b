"""The Telegram rig: chatgate and the bare PTB floor, each polling its own FakeTelegram.

Both also serve the signed ``/hooks/llm`` webhook route (chatgate's own webhook channel; the
floor's bare aiohttp handler), used by the concurrency scenario.

A burst enqueues DMs at the fake all at once, remembering each text's enqueue time, and matches
every sendMessage the subject makes back to its text. Latency = the fake's ``Call.at`` of the first
reply minus that enqueue time (both ``time.monotonic()`` in this process).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bench.configs import (
    FLOOR_MODEL_ARGS,
    LLM_HOOK_PATH,
    WEBHOOK_SECRET,
    DaemonConfig,
    telegram_api_base,
)
from bench.procs import (
    PYTHON,
    BenchError,
    FakeLLMProc,
    Proc,
    cpu_seconds,
    daemon,
    free_port,
    rss,
    started,
    wait_ready,
    wait_until,
)
from bench.runner import Context
from tests.fakes.telegram import TOKEN, FakeTelegram

Backend = Literal["llm", "echo"]
REPLY_PREFIX = {"llm": "echo: ", "echo": ""}  # FakeLLM answers "echo: <text>"
WARMUP_TIMEOUT_S = 120.0
HEALTH_TIMEOUT_S = 15.0
SETTLE_S = 0.3
QUIET_S = 1.0
QUIESCE_MAX_S = 10.0
IDLE_SETTLE_S = 1.0


@dataclass
class Subject:
    name: str
    fake: FakeTelegram
    proc: Proc


@dataclass
class Rig:
    backend: Backend
    chatgate: Subject
    floor: Subject
    llm: FakeLLMProc | None
    port: int
    floor_port: int
    quiet_s: float = QUIET_S
    idle_rss: dict[str, dict[str, int]] = field(default_factory=dict)
    next_user: int = 100_000
    restarted: bool = False  # chatgate was restarted when the current scenario took the rig
    generation: int = 0
    procs: list[Proc] = field(default_factory=list)

    def users(self, count: int) -> range:
        """Fresh user ids (new sessions) for every burst."""
        first = self.next_user
        self.next_user += count
        return range(first, first + count)


@dataclass
class Burst:
    sent: int
    wall_s: float
    latencies_s: list[float]
    missing: int
    duplicates: int
    unexpected: int
    late: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    cpu_s: float = 0.0  # the subject process's user+system CPU from enqueue until it went quiet

    def summary(self) -> dict[str, object]:
        """Diagnostics for the JSON: replies after the window and Bot API calls made."""
        return {
            "missing": self.missing,
            "arrived_late": self.late,
            "duplicates": self.duplicates,
            "unexpected": self.unexpected,
            "bot_api_calls": self.calls,
            "cpu_ms_per_msg": round(self.cpu_ms_per_msg, 3),
        }

    @property
    def msgs_per_s(self) -> float:
        return self.sent / self.wall_s if self.wall_s > 0 else float("nan")

    @property
    def expected(self) -> int:
        return self.sent + self.missing

    @property
    def cpu_ms_per_msg(self) -> float:
        """Process CPU (all threads) per DM of the burst, trailing work (typing, logs) included."""
        return self.cpu_s * 1000.0 / self.expected if self.expected else float("nan")

    @property
    def api_calls_per_msg(self) -> float:
        """Bot API calls other than getUpdates per DM (replies, typing, reactions, retries)."""
        sends = sum(n for method, n in self.calls.items() if method.lower() != "getupdates")
        return sends / self.expected if self.expected else float("nan")


async def rig(ctx: Context, backend: Backend, stack: contextlib.AsyncExitStack) -> Rig:
    """Start the fakes, chatgate and the floor; return once both answered a warm-up DM."""
    workdir = ctx.scratch(f"telegram-{backend}")
    llm: FakeLLMProc | None = None
    if backend == "llm":
        llm = await stack.enter_async_context(started(FakeLLMProc(workdir / "fake-llm.log")))
    procs: list[Proc] = []
    stack.push_async_callback(_stop_all, procs)
    floor_fake = await stack.enter_async_context(FakeTelegram())
    floor_port = free_port()
    argv = [PYTHON, "-m", "bench.floors.ptb_echo", "--base-url", floor_fake.base_url]
    argv += ["--token", TOKEN, "--mode", backend, "--webhook-port", str(floor_port)]
    argv += ["--webhook-secret", WEBHOOK_SECRET, "--webhook-path", LLM_HOOK_PATH]
    if llm is not None:
        argv += ["--llm-base", llm.base_url, *FLOOR_MODEL_ARGS]
    floor_proc = Proc("ptb-floor", argv, workdir / "floor.log")
    procs.append(floor_proc)
    await floor_proc.start()
    port = free_port()
    gate = await _start_chatgate(ctx, stack, procs, workdir / "chatgate", llm, port)
    result = Rig(
        backend,
        gate,
        Subject("floor", floor_fake, floor_proc),
        llm,
        port,
        floor_port,
        ctx.settle(QUIET_S),
        procs=procs,
    )
    await asyncio.gather(warm_up(result, result.chatgate), warm_up(result, result.floor))
    await asyncio.sleep(ctx.settle(IDLE_SETTLE_S))
    result.idle_rss = {s.name: rss(s.proc.pid) for s in (result.chatgate, result.floor)}
    return result


async def _start_chatgate(
    ctx: Context,
    stack: contextlib.AsyncExitStack,
    procs: list[Proc],
    directory: Path,
    llm: FakeLLMProc | None,
    port: int,
) -> Subject:
    fake = await stack.enter_async_context(FakeTelegram())
    config = DaemonConfig(
        port,
        llm_base=llm.base_url if llm else None,
        telegram_base=telegram_api_base(fake.base_url),
        webhook=True,
    ).write(directory)
    proc = daemon(config)
    procs.append(proc)
    await proc.start()
    await wait_ready(ctx.http, proc, port)
    return Subject("chatgate", fake, proc)


async def _stop_all(procs: list[Proc]) -> None:
    await asyncio.gather(*(proc.stop() for proc in procs))


async def shared_llm_rig(ctx: Context) -> Rig:
    """One litellm rig per run, shared by the telegram and concurrency scenarios.

    Its idle RSS right after warm-up (litellm imported, one message answered) is kept in
    ``ctx.cache["idle_rss"]`` for the memory scenario's floor. A later scenario first checks that
    chatgate still answers a DM; if it does not (an earlier scenario left it wedged), chatgate is
    restarted on a fresh state dir and fake Bot API, and ``rig.restarted`` says so.
    """
    cached = ctx.cache.get("rig:llm")
    if isinstance(cached, Rig):
        cached.restarted = False
        try:
            await warm_up(cached, cached.chatgate, within_s=HEALTH_TIMEOUT_S)
        except BenchError:
            await cached.chatgate.proc.stop()
            cached.generation += 1
            directory = ctx.scratch(f"telegram-llm/chatgate-restart{cached.generation}")
            cached.chatgate = await _start_chatgate(
                ctx, ctx.shared, cached.procs, directory, cached.llm, cached.port
            )
            await warm_up(cached, cached.chatgate)
            cached.restarted = True
        return cached
    made = await rig(ctx, "llm", ctx.shared)
    ctx.cache["rig:llm"] = made
    ctx.cache["idle_rss"] = made.idle_rss
    return made


async def warm_up(owner: Rig, subject: Subject, within_s: float = WARMUP_TIMEOUT_S) -> None:
    """One DM answered end to end: imports done, connections open (litellm prewarm included)."""
    [user] = owner.users(1)
    before = len(subject.fake.calls_of("sendMessage"))
    subject.fake.dm(user, "warm-up")
    await wait_until(
        lambda: len(subject.fake.calls_of("sendMessage")) > before,
        within_s,
        f"{subject.name} warm-up reply",
        procs=[subject.proc],
        interval=0.05,
    )


async def burst(
    owner: Rig, subject: Subject, *, users: int, per_user: int, tag: str, within_s: float
) -> Burst:
    """Enqueue ``users × per_user`` DMs at once and wait (bounded) for every reply.

    A reply that has not arrived within ``within_s`` counts as missing and as a latency of
    ``within_s`` (so percentiles never look better because replies were lost). Afterwards the
    subject is given a bounded moment to go quiet so the next burst starts clean; replies that
    arrive meanwhile are counted as late, and duplicates and calls are counted over both.
    """
    fake, prefix = subject.fake, REPLY_PREFIX[owner.backend]
    start_index = len(fake.calls)
    cpu_before = cpu_seconds(subject.proc.pid)
    enqueued: dict[str, float] = {}
    ids = list(owner.users(users))
    for k in range(per_user):
        for user in ids:
            text = f"{tag} u{user} m{k}"
            enqueued[text] = time.monotonic()
            fake.dm(user, text)
    replies = _Replies(fake, prefix, enqueued, start_index)
    first_sent = min(enqueued.values())
    deadline = first_sent + within_s
    while not replies.complete() and time.monotonic() < deadline:
        subject.proc.check_alive()
        await asyncio.sleep(0.005)
    await asyncio.sleep(SETTLE_S)  # late duplicates
    replies.scan()
    on_time = {text: at for text, at in replies.first.items() if at <= deadline}
    missing = len(enqueued) - len(on_time)
    last = max(on_time.values(), default=first_sent)
    result = Burst(
        sent=len(on_time),
        wall_s=within_s if missing else last - first_sent,
        latencies_s=[at - enqueued[text] for text, at in on_time.items()] + [within_s] * missing,
        missing=missing,
        duplicates=sum(n - 1 for n in replies.counts.values() if n > 1),
        unexpected=replies.unexpected,
    )
    await quiesce(subject, owner.quiet_s)
    result.cpu_s = cpu_seconds(subject.proc.pid) - cpu_before
    replies.scan()
    result.late = sum(1 for at in replies.first.values() if at > deadline)
    result.duplicates = sum(n - 1 for n in replies.counts.values() if n > 1)
    result.calls = dict(Counter(c.method for c in fake.calls[start_index:]))
    return result


async def quiesce(subject: Subject, quiet_s: float) -> None:
    """Wait (at most QUIESCE_MAX_S) until the subject made no Bot API call but getUpdates
    for ``quiet_s``, e.g. while it still retries deliveries of an earlier burst."""
    calls = subject.fake.calls
    deadline = time.monotonic() + QUIESCE_MAX_S
    while time.monotonic() < deadline:
        recent = [c for c in calls[-200:] if c.method.lower() != "getupdates"]
        if not recent or time.monotonic() - recent[-1].at >= quiet_s:
            return
        await asyncio.sleep(0.1)


class _Replies:
    """Incremental scan of the fake's calls: first reply time per text, counts, strays."""

    def __init__(
        self, fake: FakeTelegram, prefix: str, enqueued: dict[str, float], start: int
    ) -> None:
        self.fake, self.prefix, self.enqueued, self.index = fake, prefix, enqueued, start
        self.first: dict[str, float] = {}
        self.counts: Counter[str] = Counter()
        self.unexpected = 0

    def scan(self) -> None:
        calls = self.fake.calls
        end = len(calls)
        for call in calls[self.index : end]:
            if call.method.lower() != "sendmessage":
                continue
            text = str(call.params.get("text", ""))
            original = text[len(self.prefix) :] if text.startswith(self.prefix) else None
            if original is None or original not in self.enqueued:
                self.unexpected += 1
                continue
            self.counts[original] += 1
            self.first.setdefault(original, call.at)
        self.index = end

    def complete(self) -> bool:
        self.scan()
        return len(self.first) >= len(self.enqueued)
