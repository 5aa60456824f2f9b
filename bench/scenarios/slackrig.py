"""The Slack rig: chatgate and the bare slack-bolt floor, each on its own FakeSlack (Socket Mode).

The fakes run in the bench process; chatgate reaches its fake through ``channels.slack.api_base``,
the floor through ``AsyncWebClient(base_url=...)``; both then open the Socket Mode link the fake
hands out in ``apps.connections.open``. A burst pushes DM events over that socket all at once,
remembering each text's push time, and matches every ``chat.postMessage`` the subject makes back to
its text. Latency = the fake's ``Call.at`` of the first reply minus the push time (both
``time.monotonic()`` in this process).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.configs import FLOOR_MODEL_ARGS, DaemonConfig
from bench.procs import (
    PYTHON,
    FakeLLMProc,
    Proc,
    cpu_seconds,
    daemon,
    free_port,
    started,
    wait_ready,
)
from bench.runner import Context
from bench.scenarios.first_reply import first_reply, wait_ready_at
from bench.scenarios.tgrig import QUIESCE_MAX_S, QUIET_S, REPLY_PREFIX, SETTLE_S, Backend, Burst
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack

POST = "chat.postMessage"
WARM_UP_USERS = (99_998, 99_999)  # below every burst's users


@dataclass
class Subject:
    name: str
    fake: FakeSlack
    proc: Proc


@dataclass
class SlackRig:
    backend: Backend
    chatgate: Subject
    floor: Subject
    llm: FakeLLMProc | None
    quiet_s: float = QUIET_S
    first_reply_s: tuple[float, float] = (math.nan, math.nan)  # chatgate, floor
    next_user: int = 100_000

    def users(self, count: int) -> range:
        """Fresh user ids (new DM channels, new sessions) for every burst."""
        first = self.next_user
        self.next_user += count
        return range(first, first + count)


def chatgate_section(fake: FakeSlack) -> dict[str, Any]:
    """``channels.slack`` for the daemon: Socket Mode against the fake, open DMs."""
    return {
        "mode": "socket",
        "bot_token": BOT_TOKEN,
        "app_token": APP_TOKEN,
        "api_base": fake.api_url,
        "dm_policy": "open",
    }


def floor_argv(fake: FakeSlack, backend: Backend, llm: FakeLLMProc | None) -> list[str]:
    argv = [PYTHON, "-m", "bench.floors.bolt_echo", "--api-url", fake.api_url]
    argv += ["--bot-token", BOT_TOKEN, "--app-token", APP_TOKEN, "--mode", backend]
    if llm is not None:
        argv += ["--llm-base", llm.base_url, *FLOOR_MODEL_ARGS]
    return argv


async def rig(ctx: Context, backend: Backend, stack: contextlib.AsyncExitStack) -> SlackRig:
    """Start the floor, then chatgate, each answering its first DM the moment its socket opened
    (the first-reply row and the warm-up); return once both did."""
    workdir = ctx.scratch(f"slack-{backend}")
    llm: FakeLLMProc | None = None
    if backend == "llm":
        llm = await stack.enter_async_context(started(FakeLLMProc(workdir / "fake-llm.log")))
    gate_fake = await stack.enter_async_context(FakeSlack())
    floor_fake = await stack.enter_async_context(FakeSlack())
    quiet = ctx.settle(QUIET_S)
    floor_proc = await stack.enter_async_context(
        started(Proc("bolt-floor", floor_argv(floor_fake, backend, llm), workdir / "floor.log"))
    )
    floor = Subject("floor", floor_fake, floor_proc)
    floor_first = await first_contact(floor, WARM_UP_USERS[0], quiet)
    port = free_port()
    config = DaemonConfig(
        port, llm_base=llm.base_url if llm else None, slack=chatgate_section(gate_fake)
    ).write(workdir / "chatgate")
    gate_proc = await stack.enter_async_context(started(daemon(config)))
    gate = Subject("chatgate", gate_fake, gate_proc)
    gate_first = await first_contact(gate, WARM_UP_USERS[1], quiet)
    await wait_ready(ctx.http, gate_proc, port)
    return SlackRig(backend, gate, floor, llm, quiet, first_reply_s=(gate_first, floor_first))


def socket_opened(fake: FakeSlack) -> float | None:
    """When the subject's first Socket Mode link was greeted (it can take events), if it was."""
    greeted = [c.opened_at for c in fake.all_connections if c.ready]
    return min(greeted, default=None)


def dm_event(fake: FakeSlack, user: int, text: str) -> dict[str, Any]:
    """A DM from ``U<user>`` in its own IM channel ``D<user>``."""
    return fake.message_event(text, user=f"U{user}", channel=f"D{user}", channel_type="im")


async def first_contact(subject: Subject, user: int, quiet_s: float) -> float:
    """One DM pushed as soon as the socket is open, answered end to end (imports done,
    connections warm); seconds from the socket's greeting to the reply at the fake."""
    fake = subject.fake
    ready_at = await wait_ready_at(lambda: socket_opened(fake), subject.name, [subject.proc])
    before = len(fake.calls(POST))

    def replied_at() -> float | None:
        posts = fake.calls(POST)
        return posts[before].at if len(posts) > before else None

    seconds = await first_reply(
        subject.name,
        ready_at,
        lambda: fake.push_event(dm_event(fake, user, "warm-up")),
        replied_at,
        [subject.proc],
    )
    await quiesce(subject, quiet_s)
    forget_acked(fake)
    return seconds


def forget_acked(fake: FakeSlack) -> None:
    """Drop acked envelopes from the fake's list: it keeps every envelope for the tests' asserts,
    and a reconnect scans the list, so a long-lived fake would grow with every burst."""
    fake.envelopes[:] = [e for e in fake.envelopes if e.ack is None]


async def burst(
    owner: SlackRig, subject: Subject, *, users: int, per_user: int, tag: str, within_s: float
) -> Burst:
    """Push ``users × per_user`` DMs at once and wait (bounded) for every reply.

    As ``tgrig.burst``: a reply not there within ``within_s`` is missing and counts as a latency
    of ``within_s``; afterwards the subject gets a bounded moment to go quiet (late replies and
    duplicates are counted over both), and ``cpu_s`` is its own CPU from before the first push
    until then.
    """
    fake, prefix = subject.fake, REPLY_PREFIX[owner.backend]
    start = len(fake.calls())
    cpu_before = cpu_seconds(subject.proc.pid)
    ids = list(owner.users(users))  # once: a nested comprehension would draw new users per k
    events = [(f"{tag} u{user} m{k}", user) for k in range(per_user) for user in ids]
    pushed: dict[str, float] = {}
    for text, user in events:
        event = dm_event(fake, user, text)
        pushed[text] = time.monotonic()
        await fake.push_event(event)
    replies = _Replies(fake, prefix, pushed, start)
    first_sent = min(pushed.values())
    deadline = first_sent + within_s
    while not replies.complete() and time.monotonic() < deadline:
        subject.proc.check_alive()
        await asyncio.sleep(0.005)
    await asyncio.sleep(SETTLE_S)  # late duplicates
    replies.scan()
    on_time = {text: at for text, at in replies.first.items() if at <= deadline}
    missing = len(pushed) - len(on_time)
    last = max(on_time.values(), default=first_sent)
    result = Burst(
        sent=len(on_time),
        wall_s=within_s if missing else last - first_sent,
        latencies_s=[at - pushed[text] for text, at in on_time.items()] + [within_s] * missing,
        missing=missing,
        duplicates=0,
        unexpected=0,
    )
    await quiesce(subject, owner.quiet_s)
    result.cpu_s = cpu_seconds(subject.proc.pid) - cpu_before
    replies.scan()
    result.late = sum(1 for at in replies.first.values() if at > deadline)
    result.duplicates = sum(n - 1 for n in replies.counts.values() if n > 1)
    result.unexpected = replies.unexpected
    result.calls = dict(Counter(c.method for c in fake.calls()[start:]))
    forget_acked(fake)
    return result


async def quiesce(subject: Subject, quiet_s: float) -> None:
    """Wait (at most QUIESCE_MAX_S) until the subject made no Web API call for ``quiet_s``."""
    deadline = time.monotonic() + QUIESCE_MAX_S
    while time.monotonic() < deadline:
        calls = subject.fake.calls()
        if not calls or time.monotonic() - calls[-1].at >= quiet_s:
            return
        await asyncio.sleep(0.1)


class _Replies:
    """Incremental scan of the fake's calls: first reply time per text, counts, strays."""

    def __init__(self, fake: FakeSlack, prefix: str, pushed: dict[str, float], start: int) -> None:
        self.fake, self.prefix, self.pushed, self.index = fake, prefix, pushed, start
        self.first: dict[str, float] = {}
        self.counts: Counter[str] = Counter()
        self.unexpected = 0

    def scan(self) -> None:
        calls = self.fake.calls()
        for call in calls[self.index :]:
            if call.method != POST or call.status != 200:
                continue
            text = str(call.params.get("text", ""))
            original = text[len(self.prefix) :] if text.startswith(self.prefix) else None
            if original is None or original not in self.pushed:
                self.unexpected += 1
                continue
            self.counts[original] += 1
            self.first.setdefault(original, call.at)
        self.index = len(calls)

    def complete(self) -> bool:
        self.scan()
        return len(self.first) >= len(self.pushed)
