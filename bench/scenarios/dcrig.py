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
import math
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
)
from bench.runner import Context
from bench.scenarios.first_reply import first_reply, wait_ready_at
from bench.scenarios.tgrig import REPLY_PREFIX, Backend, Burst
from tests.fakes.discord_lite import TOKEN, FakeDiscord

SEND = "POST /channels/{id}/messages"
WARM_UP_USERS = (99_998, 99_999)  # below every burst's users
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
    first_reply_s: tuple[float, float] = (math.nan, math.nan)  # chatgate, floor
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
    """Start the floor, then chatgate, each answering its first DM the moment its gateway
    session is up (the first-reply row and the warm-up); return once both did."""
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
    floor_proc = await stack.enter_async_context(
        started(Proc("discordpy-floor", argv, workdir / "floor.log"))
    )
    floor = Subject("floor", floor_fake, floor_proc)
    floor_first = await first_contact(floor, WARM_UP_USERS[0])
    port = free_port()
    config = DaemonConfig(
        port, llm_base=llm.base_url if llm else None, discord=chatgate_section(gate_fake)
    ).write(workdir / "chatgate")
    gate_proc = await stack.enter_async_context(started(daemon(config)))
    gate = Subject("chatgate", gate_fake, gate_proc)
    gate_first = await first_contact(gate, WARM_UP_USERS[1])
    await wait_ready(ctx.http, gate_proc, port)
    return DiscordRig(backend, gate, floor, llm, first_reply_s=(gate_first, floor_first))


async def first_contact(subject: Subject, user: int) -> float:
    """One DM the moment the subject's gateway session is up, answered end to end (imports
    done, connections warm); seconds from then to the reply at the fake."""
    fake = subject.fake
    before = len(fake.sent())
    ready_at = await wait_ready_at(
        lambda: time.monotonic() if fake.connected > 0 else None, subject.name, [subject.proc]
    )

    async def send() -> None:
        fake.dm(user, "warm-up")

    def replied_at() -> float | None:
        sent = fake.sent()
        return sent[before].at if len(sent) > before else None

    return await first_reply(subject.name, ready_at, send, replied_at, [subject.proc])


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
