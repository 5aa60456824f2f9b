"""The Discord rig: chatgate and the bare discord.py floor, each connected to its own FakeDiscord.

The fakes run in the bench process; both subjects reach theirs over TLS through a static
resolver and the fake's CA (chatgate through `channels.discord.resolve`/`ca_file`). A burst posts
DMs at the fake all at once, remembering each text's post time, and matches every message the
subject creates back to its text. Latency = the fake's ``Call.at`` of the first reply minus the
post time (both ``time.monotonic()`` in this process).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from dataclasses import dataclass

from bench.configs import FLOOR_MODEL_ARGS, DaemonConfig
from bench.procs import (
    PYTHON,
    FakeLLMProc,
    Proc,
    daemon,
    free_port,
    started,
    wait_ready,
    wait_until,
)
from bench.runner import Context
from bench.scenarios.tgrig import REPLY_PREFIX, Backend, Burst
from tests.fakes.discord_lite import TOKEN, FakeDiscord

SEND = "POST /channels/{id}/messages"
WARMUP_TIMEOUT_S = 120.0
SETTLE_S = 0.3


@dataclass
class Subject:
    name: str
    fake: FakeDiscord
    proc: Proc


@dataclass
class DiscordRig:
    backend: Backend
    chatgate: Subject
    floor: Subject
    llm: FakeLLMProc | None
    next_user: int = 100_000

    def users(self, count: int) -> range:
        first = self.next_user
        self.next_user += count
        return range(first, first + count)


def chatgate_section(fake: FakeDiscord) -> dict[str, object]:
    return {
        "token": TOKEN,
        "ca_file": str(fake.ca_file),
        "resolve": fake.resolve,
        "guild_ready_timeout_s": 0.05,
        "dm_policy": "open",
        "max_lines": 0,
    }


async def rig(ctx: Context, backend: Backend, stack: contextlib.AsyncExitStack) -> DiscordRig:
    """Start both fakes, chatgate and the floor; return once both answered a warm-up DM."""
    workdir = ctx.scratch(f"discord-{backend}")
    llm: FakeLLMProc | None = None
    if backend == "llm":
        llm = await stack.enter_async_context(started(FakeLLMProc(workdir / "fake-llm.log")))
    gate_fake = await stack.enter_async_context(FakeDiscord())
    floor_fake = await stack.enter_async_context(FakeDiscord())
    argv = [PYTHON, "-m", "bench.floors.discordpy_echo", "--port", str(floor_fake.port)]
    argv += ["--ca-file", str(floor_fake.ca_file), "--token", TOKEN, "--mode", backend]
    if llm is not None:
        argv += ["--llm-base", llm.base_url, *FLOOR_MODEL_ARGS]
    floor = await stack.enter_async_context(
        started(Proc("discordpy-floor", argv, workdir / "floor.log"))
    )
    port = free_port()
    config = DaemonConfig(
        port, llm_base=llm.base_url if llm else None, discord=chatgate_section(gate_fake)
    ).write(workdir / "chatgate")
    gate = await stack.enter_async_context(started(daemon(config)))
    await wait_ready(ctx.http, gate, port)
    made = DiscordRig(
        backend, Subject("chatgate", gate_fake, gate), Subject("floor", floor_fake, floor), llm
    )
    await asyncio.gather(warm_up(made, made.chatgate), warm_up(made, made.floor))
    return made


async def warm_up(owner: DiscordRig, subject: Subject) -> None:
    [user] = owner.users(1)
    before = len(subject.fake.sent())
    await wait_until(
        lambda: subject.fake.connected > 0,
        WARMUP_TIMEOUT_S,
        f"{subject.name} gateway",
        procs=[subject.proc],
    )
    subject.fake.dm(user, "warm-up")
    await wait_until(
        lambda: len(subject.fake.sent()) > before,
        WARMUP_TIMEOUT_S,
        f"{subject.name} warm-up reply",
        procs=[subject.proc],
        interval=0.05,
    )


async def burst(
    owner: DiscordRig, subject: Subject, *, users: int, per_user: int, tag: str, within_s: float
) -> Burst:
    """Post ``users × per_user`` DMs at once and wait (bounded) for every reply."""
    fake, prefix = subject.fake, REPLY_PREFIX[owner.backend]
    start = len(fake.calls)
    posted: dict[str, float] = {}
    ids = list(owner.users(users))
    for k in range(per_user):
        for user in ids:
            text = f"{tag} u{user} m{k}"
            posted[text] = time.monotonic()
            fake.dm(user, text)
    first_sent = min(posted.values())
    deadline = first_sent + within_s
    first: dict[str, float] = {}
    counts: Counter[str] = Counter()
    unexpected = 0
    scanned = start

    def scan() -> None:
        nonlocal scanned, unexpected
        calls = fake.calls
        for call in calls[scanned:]:
            if call.route != SEND or call.status >= 300:
                continue
            text = str((call.json or {}).get("content", ""))
            original = text[len(prefix) :] if text.startswith(prefix) else None
            if original not in posted:
                unexpected += 1
                continue
            counts[original] += 1
            first.setdefault(original, call.at)
        scanned = len(calls)

    while time.monotonic() < deadline:
        scan()
        if len(first) >= len(posted):
            break
        subject.proc.check_alive()
        await asyncio.sleep(0.005)
    await asyncio.sleep(SETTLE_S)
    scan()
    on_time = {t: at for t, at in first.items() if at <= deadline}
    missing = len(posted) - len(on_time)
    last = max(on_time.values(), default=first_sent)
    return Burst(
        sent=len(on_time),
        wall_s=within_s if missing else last - first_sent,
        latencies_s=[at - posted[t] for t, at in on_time.items()] + [within_s] * missing,
        missing=missing,
        duplicates=sum(n - 1 for n in counts.values() if n > 1),
        unexpected=unexpected,
        calls=dict(Counter(c.route for c in fake.calls[start:])),
    )
