"""Scenario teams: a burst of messages and a concurrency wave through the real daemon vs a bare
Teams SDK bot (`bench.floors.teams_echo`, the library chatgate's Teams channel runs on).

Each side has its own FakeTeams (token issuer + Bot Connector, in the bench process); the bench
posts activities to the subject's port the way Teams does (a signed Bot Framework JWT, reused
like Teams reuses its tokens; at most ``POST_CONCURRENCY`` in flight) and matches every message
activity the fake's connector records back to its text. One personal chat per user. Burst:
the Slack scenario's shape, ``llm`` and ``echo`` variants; the concurrency wave as there.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.configs import FLOOR_MODEL_ARGS, DaemonConfig
from bench.procs import (
    PYTHON,
    AnnouncedProc,
    FakeLLMProc,
    Proc,
    daemon,
    free_port,
    started,
    wait_ready,
)
from bench.runner import Context, Outcome
from bench.scenarios.first_reply import TIMEOUT_S
from bench.scenarios.posted_burst import Record, posted_burst, posted_first_reply
from bench.scenarios.slack import Platform, burst_specs, measure, shape_params, wave_specs
from bench.scenarios.tgrig import QUIET_S, REPLY_PREFIX, Backend, Burst
from tests.fakes.teams import APP_ID, APP_PASSWORD, FakeTeams

WARM_UP_USERS = ("aad-bench-warm-floor", "aad-bench-warm-chatgate")
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
    first_reply_s: tuple[float, float] = (math.nan, math.nan)  # chatgate, floor
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
    """Start the floor, then chatgate, each answering its first message the moment it is ready
    (the first-reply row and the warm-up); return once both did."""
    workdir = ctx.scratch(f"teams-{backend}")
    llm: FakeLLMProc | None = None
    if backend == "llm":
        llm = await stack.enter_async_context(started(FakeLLMProc(workdir / "fake-llm.log")))
    gate_fake = await stack.enter_async_context(FakeTeams())
    floor_fake = await stack.enter_async_context(FakeTeams())
    quiet = ctx.settle(QUIET_S)
    argv = floor_argv(floor_fake, backend, llm)
    floor_proc = await stack.enter_async_context(
        started(AnnouncedProc("teams-floor", argv, workdir / "floor.log"))
    )
    floor_url = f"http://127.0.0.1:{floor_proc.port}{PATH}"
    floor = Subject("floor", floor_fake, floor_proc, floor_url, floor_fake.token())
    floor_first = await first_contact(floor, floor_proc.ready_at, WARM_UP_USERS[0], quiet)
    port = free_port()
    config = DaemonConfig(
        port, llm_base=llm.base_url if llm else None, teams=chatgate_section(gate_fake)
    )
    gate_proc = await stack.enter_async_context(started(daemon(config.write(workdir / "chatgate"))))
    ready_at = await wait_ready(ctx.http, gate_proc, port, TIMEOUT_S)
    gate_url = f"http://127.0.0.1:{port}{PATH}"
    gate = Subject("chatgate", gate_fake, gate_proc, gate_url, gate_fake.token())
    gate_first = await first_contact(gate, ready_at, WARM_UP_USERS[1], quiet)
    return TeamsRig(backend, gate, floor, llm, quiet, first_reply_s=(gate_first, floor_first))


def sends(fake: FakeTeams, start: int = 0) -> list[tuple[str, float]]:
    """(text, arrival) of every message activity the connector took from index ``start`` on."""
    return [(s.text, s.at) for s in fake.sent[start:] if s.activity.get("type") == "message"]


def _post(subject: Subject, user: str, text: str) -> Any:
    activity = subject.fake.message(text, user=user, conversation=f"a:1{user}")
    return subject.fake.post(subject.url, activity, token=subject.token)


def record(fake: FakeTeams) -> Record:
    return Record(
        lambda start: sends(fake, start),
        lambda: len(fake.sent),
        lambda: fake.sent[-1].at if fake.sent else None,
        lambda start: Counter(str(s.activity.get("type")) for s in fake.sent[start:]),
    )


async def first_contact(subject: Subject, ready_at: float, user: str, quiet_s: float) -> float:
    """One message posted now, answered end to end (imports done, token fetched, connections warm):
    seconds from ready to the reply."""

    async def post() -> int:
        return (await _post(subject, user, "warm-up"))[0]

    return await posted_first_reply(
        subject.name, subject.proc, ready_at, post, record(subject.fake), quiet_s
    )


async def burst(
    owner: TeamsRig, subject: Subject, *, users: int, per_user: int, tag: str, within_s: float
) -> Burst:
    """The posted burst (bench/scenarios/posted_burst.py) of signed activities."""

    async def post(text: str, user: str) -> int:
        return (await _post(subject, user, text))[0]

    return await posted_burst(
        subject.proc,
        record(subject.fake),
        post,
        owner.users(users),
        per_user=per_user,
        tag=tag,
        prefix=REPLY_PREFIX[owner.backend],
        within_s=within_s,
        quiet_s=owner.quiet_s,
        concurrency=POST_CONCURRENCY,
    )


def summary(result: Burst) -> dict[str, object]:
    out = result.summary()
    out["connector_calls"] = out.pop("bot_api_calls")
    out["refused_posts"] = out.pop("unexpected")
    return out


TEAMS = Platform(
    rig, burst, summary, lambda variant: SPECS[variant], WAVE, "/readyz; floor: listening"
)


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
