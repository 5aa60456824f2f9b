"""Scenario teams: a burst of messages and a concurrency wave through the real daemon vs a bare
Teams SDK bot (`bench.floors.teams_echo`, the library chatgate's Teams channel runs on).

Each side has its own FakeTeams (token issuer + Bot Connector, in the bench process); the bench
posts activities to the subject's port the way Teams does (a signed Bot Framework JWT, reused
like Teams reuses its tokens; at most ``POST_CONCURRENCY`` in flight) and matches every message
activity the fake's connector records back to its text. One personal chat per user. Burst:
the Slack scenario's shape, ``llm`` and ``echo`` variants; the concurrency wave as there.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.configs import FLOOR_MODEL_ARGS, DaemonConfig
from bench.procs import (
    PYTHON,
    AnnouncedProc,
    FakeLLMProc,
    Proc,
    cpu_seconds,
    daemon,
    free_port,
    started,
    wait_ready,
    wait_until,
)
from bench.runner import Context, Outcome
from bench.scenarios.slack import Platform, burst_specs, measure, shape_params, wave_specs
from bench.scenarios.tgrig import QUIESCE_MAX_S, QUIET_S, REPLY_PREFIX, SETTLE_S, Backend, Burst
from tests.fakes.teams import APP_ID, APP_PASSWORD, FakeTeams

WARMUP_TIMEOUT_S = 120.0
POST_CONCURRENCY = 64
PATH = "/teams/messages"
REPLY = "activities"
SPECS = {v: burst_specs(v, REPLY, "Bot Connector") for v in ("llm", "echo")}
WAVE = wave_specs(REPLY)


@dataclass
class Subject:
    name: str
    fake: FakeTeams
    proc: Proc
    url: str
    token: str = ""


@dataclass
class TeamsRig:
    backend: Backend
    chatgate: Subject
    floor: Subject
    llm: FakeLLMProc | None
    quiet_s: float = QUIET_S
    next_user: int = 0

    def users(self, count: int) -> list[str]:
        first = self.next_user
        self.next_user += count
        return [f"aad-bench-{n}" for n in range(first, first + count)]


def chatgate_section(fake: FakeTeams) -> dict[str, Any]:
    return {
        "app_id": APP_ID,
        "app_password": APP_PASSWORD,
        "dm_policy": "open",
        "endpoints": {"login_endpoint": fake.base, "openid_metadata_url": fake.metadata_url},
    }


def floor_argv(fake: FakeTeams, backend: Backend, llm: FakeLLMProc | None) -> list[str]:
    argv = [PYTHON, "-m", "bench.floors.teams_echo", "--login", fake.base]
    argv += ["--metadata", fake.metadata_url, "--app-id", APP_ID, "--app-password", APP_PASSWORD]
    argv += ["--mode", backend]
    if llm is not None:
        argv += ["--llm-base", llm.base_url, *FLOOR_MODEL_ARGS]
    return argv


async def rig(ctx: Context, backend: Backend, stack: contextlib.AsyncExitStack) -> TeamsRig:
    """Start both fakes, chatgate and the floor; return once both answered a warm-up message."""
    workdir = ctx.scratch(f"teams-{backend}")
    llm: FakeLLMProc | None = None
    if backend == "llm":
        llm = await stack.enter_async_context(started(FakeLLMProc(workdir / "fake-llm.log")))
    gate_fake = await stack.enter_async_context(FakeTeams())
    floor_fake = await stack.enter_async_context(FakeTeams())
    argv = floor_argv(floor_fake, backend, llm)
    floor = await stack.enter_async_context(
        started(AnnouncedProc("teams-floor", argv, workdir / "floor.log"))
    )
    port = free_port()
    config = DaemonConfig(
        port, llm_base=llm.base_url if llm else None, teams=chatgate_section(gate_fake)
    )
    gate = await stack.enter_async_context(started(daemon(config.write(workdir / "chatgate"))))
    await wait_ready(ctx.http, gate, port)
    made = TeamsRig(
        backend,
        Subject("chatgate", gate_fake, gate, f"http://127.0.0.1:{port}{PATH}", gate_fake.token()),
        Subject("floor", floor_fake, floor, f"http://127.0.0.1:{floor.port}{PATH}"),
        llm,
        ctx.settle(QUIET_S),
    )
    made.floor.token = floor_fake.token()
    await asyncio.gather(warm_up(made, made.chatgate), warm_up(made, made.floor))
    return made


def sends(fake: FakeTeams, start: int = 0) -> list[tuple[str, float]]:
    """(text, arrival) of every message activity the connector took from index ``start`` on."""
    return [(s.text, s.at) for s in fake.sent[start:] if s.activity.get("type") == "message"]


def _post(subject: Subject, user: str, text: str) -> Any:
    activity = subject.fake.message(text, user=user, conversation=f"a:1{user}")
    return subject.fake.post(subject.url, activity, token=subject.token)


async def warm_up(owner: TeamsRig, subject: Subject) -> None:
    """One message answered end to end: imports done, token fetched, connections warm."""
    [user] = owner.users(1)
    before = len(sends(subject.fake))
    status, _ = await _post(subject, user, "warm-up")
    await wait_until(
        lambda: status == 200 and len(sends(subject.fake)) > before,
        WARMUP_TIMEOUT_S,
        f"{subject.name} warm-up reply",
        procs=[subject.proc],
        interval=0.05,
    )
    await quiesce(subject, owner.quiet_s)


async def burst(
    owner: TeamsRig, subject: Subject, *, users: int, per_user: int, tag: str, within_s: float
) -> Burst:
    """Post ``users × per_user`` messages at once (bounded in flight) and wait, bounded, for
    every reply; a reply missing at ``within_s`` counts that as its latency; ``cpu_s`` is the
    subject's CPU from the first post until it went quiet."""
    fake, prefix = subject.fake, REPLY_PREFIX[owner.backend]
    start = len(fake.sent)
    cpu_before = cpu_seconds(subject.proc.pid)
    people = owner.users(users)
    posts = [(f"{tag} {user} m{k}", user) for k in range(per_user) for user in people]
    pushed: dict[str, float] = {}
    gate = asyncio.Semaphore(POST_CONCURRENCY)
    refused: list[int] = []

    async def post(text: str, user: str) -> None:
        async with gate:
            pushed[text] = time.monotonic()
            status, _ = await _post(subject, user, text)
            if status != 200:
                refused.append(status)

    first_sent = time.monotonic()
    posting = asyncio.gather(*(post(text, user) for text, user in posts))
    deadline = first_sent + within_s
    replies = _Replies(fake, prefix, start)
    while time.monotonic() < deadline:
        subject.proc.check_alive()
        replies.scan()
        if posting.done() and len(replies.first) >= len(posts):
            break
        await asyncio.sleep(0.005)
    await posting
    await asyncio.sleep(SETTLE_S)
    replies.scan()
    first = replies.first
    on_time = {t: at for t, at in first.items() if t in pushed and at <= deadline}
    missing = len(posts) - len(on_time)
    last = max(on_time.values(), default=first_sent)
    result = Burst(
        sent=len(on_time),
        wall_s=within_s if missing else last - first_sent,
        latencies_s=[at - pushed[t] for t, at in on_time.items()] + [within_s] * missing,
        missing=missing,
        duplicates=0,
        unexpected=len(refused),
    )
    await quiesce(subject, owner.quiet_s)
    result.cpu_s = cpu_seconds(subject.proc.pid) - cpu_before
    replies.scan()
    result.late = sum(1 for t, at in first.items() if t in pushed and at > deadline)
    result.duplicates = sum(n - 1 for t, n in replies.counts.items() if t in pushed and n > 1)
    result.calls = dict(Counter(str(s.activity.get("type")) for s in fake.sent[start:]))
    return result


class _Replies:
    """Incremental scan of the connector's record: first arrival and count per text."""

    def __init__(self, fake: FakeTeams, prefix: str, start: int) -> None:
        self.fake, self.prefix, self.index = fake, prefix, start
        self.first: dict[str, float] = {}
        self.counts: Counter[str] = Counter()

    def scan(self) -> None:
        for text, at in sends(self.fake, self.index):
            original = text.removeprefix(self.prefix)
            self.counts[original] += 1
            self.first.setdefault(original, at)
        self.index = len(self.fake.sent)


async def quiesce(subject: Subject, quiet_s: float) -> None:
    """Wait (at most QUIESCE_MAX_S) until the subject made no connector call for ``quiet_s``."""
    deadline = time.monotonic() + QUIESCE_MAX_S
    while time.monotonic() < deadline:
        sent = subject.fake.sent
        if not sent or time.monotonic() - sent[-1].at >= quiet_s:
            return
        await asyncio.sleep(0.1)


def summary(result: Burst) -> dict[str, object]:
    out = result.summary()
    out["connector_calls"] = out.pop("bot_api_calls")
    out["refused_posts"] = out.pop("unexpected")
    return out


TEAMS = Platform(rig, burst, summary, lambda variant: SPECS[variant], WAVE)


async def scenario(ctx: Context) -> Outcome:
    table, extra = await measure(ctx, TEAMS)
    params = {
        **shape_params(ctx),
        "transport": "Bot Framework activities (RS256 JWT) posted to the subject + Bot "
        f"Connector over plain HTTP, FakeTeams in the bench, {POST_CONCURRENCY} posts in flight",
        "floor": "bare Teams SDK bot: PyJWT verification, SDK activity models, 200 at once, one "
        "SDK create_activity per message (litellm or echo), SDK client-credentials token",
        "chatgate": "daemon, channels.teams defaults (typing while slow), dm_policy open, "
        "rate limits off",
    }
    return Outcome(table, params, extra)
