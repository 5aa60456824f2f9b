"""Scenarios telegram_tls_*: the realistic Telegram shape, Bot API over TLS, vs a bare PTB bot.

The fake Bot API serves HTTPS with a throwaway CA (``bench.tls``); chatgate (``api_base``) and the
floor (``base_url``) reach it by its https URL and trust the CA through ``SSL_CERT_FILE``. Both
answer through litellm to FakeLLM (its own process); the floor applies chatgate's public litellm
settings (``--daemon-litellm``), so the comparison is of everything else.

Each repetition starts, in turn, the floor and then chatgate, each fresh (new process, new fake
Bot API, new state): **first reply after ready** is the time from the subject's first getUpdates to
the reply to a DM sent at that moment (both import litellm before they poll; chatgate also walks one
offline completion, so its first real call imports nothing). Then the burst:

- ``telegram_tls_dms``: 50 users × 10 DMs at once (500), model without latency;
- ``telegram_tls_slow_model``: 200 users × one DM at once, model answering after 0.5 s.

Per burst: wall, msgs/s, the subject process's own CPU per message (``/proc/<pid>/stat`` utime +
stime, until it went quiet), Bot API calls per message (getUpdates excluded) and the most model
calls in flight at FakeLLM.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.configs import FLOOR_MODEL_ARGS, DaemonConfig, telegram_api_base
from bench.procs import PYTHON, FakeLLMProc, Proc, daemon, free_port, started, wait_until
from bench.runner import Context, Outcome, Scenario
from bench.scenarios.tgrig import WARMUP_TIMEOUT_S, Burst, Rig, Subject, burst
from bench.stats import Spec, Table
from bench.tls import LoopbackTLS, loopback_tls
from tests.fakes.telegram import TOKEN, FakeTelegram

# A subject imports litellm (seconds, longer on a busy machine) before polling or before its
# first reply: as generous as the rig's warm-up.
READY_TIMEOUT_S = WARMUP_TIMEOUT_S
FIRST_REPLY_TIMEOUT_S = WARMUP_TIMEOUT_S
WINDOW_PER_DM_S = 0.05


@dataclass(frozen=True)
class Shape:
    """One scenario: how many users send how many DMs to a model of what latency."""

    name: str
    users: int
    per_user: int
    latency_s: float
    quick_users: int
    quick_per_user: int


DMS = Shape("telegram_tls_dms", 50, 10, 0.0, 10, 3)
SLOW_MODEL = Shape("telegram_tls_slow_model", 200, 1, 0.5, 30, 1)

WALL = Spec("wall_s", "burst wall time", "s", "lower")
RATE = Spec("msgs_per_s", "msgs/s", "1/s", "higher")
CPU = Spec("cpu_ms_per_msg", "process CPU per message", "ms", "lower")
CALLS = Spec("bot_api_calls_per_msg", "Bot API calls per message (no getUpdates)", "", "lower")
IN_FLIGHT = Spec("max_model_in_flight", "most model calls in flight", "", "higher")
FIRST = Spec("first_reply_s", "first reply after ready (first getUpdates)", "s", "lower")
MISSING = Spec("missing", "missing replies", "", "lower", 0.0)


@dataclass
class Run:
    """What one subject did in one repetition."""

    burst: Burst
    first_reply_s: float
    max_in_flight: int


def scenario_for(shape: Shape) -> Scenario:
    async def scenario(ctx: Context) -> Outcome:
        return await run(ctx, shape)

    return scenario


dms = scenario_for(DMS)
slow_model = scenario_for(SLOW_MODEL)


async def run(ctx: Context, shape: Shape) -> Outcome:
    users = ctx.pick(shape.users, shape.quick_users)
    per_user = ctx.pick(shape.per_user, shape.quick_per_user)
    workdir = ctx.scratch(shape.name)
    tls = loopback_tls(workdir)
    table = Table()
    runs: list[dict[str, Any]] = []
    next_user = [100_000]
    async with started(FakeLLMProc(workdir / "fake-llm.log", shape.latency_s)) as llm:
        for rep in range(ctx.reps):
            floor = await _measure(ctx, shape, tls, llm, "floor", rep, users, per_user, next_user)
            gate = await _measure(ctx, shape, tls, llm, "chatgate", rep, users, per_user, next_user)
            table.add(WALL, gate.burst.wall_s, floor.burst.wall_s)
            table.add(RATE, gate.burst.msgs_per_s, floor.burst.msgs_per_s)
            table.add(CPU, gate.burst.cpu_ms_per_msg, floor.burst.cpu_ms_per_msg)
            table.add(CALLS, gate.burst.api_calls_per_msg, floor.burst.api_calls_per_msg)
            table.add(IN_FLIGHT, gate.max_in_flight, floor.max_in_flight)
            table.add(FIRST, gate.first_reply_s, floor.first_reply_s)
            table.add(MISSING, gate.burst.missing, floor.burst.missing)
            runs.append({"chatgate": gate.burst.summary(), "floor": floor.burst.summary()})
    params = {
        "users": users,
        "per_user": per_user,
        "dms": users * per_user,
        "fake_llm_latency_s": shape.latency_s,
        "transport": "Bot API over HTTPS (throwaway CA trusted via SSL_CERT_FILE)",
        "floor": "python-telegram-bot Application, concurrent_updates(True), pool 8, "
        "litellm.acompletion per message with chatgate's public litellm settings, send_message",
        "chatgate": "daemon, dm_policy open, rate limits off, mid_turn queue",
        "order": "per repetition: floor, then chatgate; each started fresh",
        "reps": ctx.reps,
    }
    return Outcome(table, params, {"bursts": runs})


async def _measure(
    ctx: Context,
    shape: Shape,
    tls: LoopbackTLS,
    llm: FakeLLMProc,
    name: str,
    rep: int,
    users: int,
    per_user: int,
    next_user: list[int],
) -> Run:
    directory = ctx.scratch(f"{shape.name}/{name}-r{rep}")
    async with contextlib.AsyncExitStack() as stack:
        fake = await stack.enter_async_context(FakeTelegram(ssl_context=tls.server_context))
        proc = _subject_proc(name, fake, llm, tls, directory)
        await stack.enter_async_context(started(proc))
        # Unwinding stops the fake first: its held getUpdates returns at once, so the subject
        # does not sit out a long poll before it can exit.
        stack.push_async_callback(fake.stop)
        subject = Subject(name, fake, proc)
        await wait_until(
            lambda: fake.get_updates_calls > 0, READY_TIMEOUT_S, f"{name} polling", procs=[proc]
        )
        ready_at = fake.calls_of("getUpdates")[0].at
        owner = Rig("llm", subject, subject, llm, 0, 0, ctx.settle(1.0), next_user=next_user[0])
        first_reply_s = await _first_reply(owner, subject, ready_at)
        await llm.reset(ctx.http)
        result = await burst(
            owner,
            subject,
            users=users,
            per_user=per_user,
            tag=f"r{rep}",
            within_s=max(20.0, WINDOW_PER_DM_S * users * per_user),
        )
        stats = await llm.stats(ctx.http)
        next_user[0] = owner.next_user
    return Run(result, first_reply_s, stats["max_in_flight"])


def _subject_proc(
    name: str, fake: FakeTelegram, llm: FakeLLMProc, tls: LoopbackTLS, directory: Path
) -> Proc:
    if name == "chatgate":
        config = DaemonConfig(
            free_port(), llm_base=llm.base_url, telegram_base=telegram_api_base(fake.base_url)
        ).write(directory)
        return daemon(config, env=tls.client_env())
    argv = [PYTHON, "-m", "bench.floors.ptb_echo", "--base-url", fake.base_url, "--token", TOKEN]
    argv += ["--mode", "llm", "--llm-base", llm.base_url, *FLOOR_MODEL_ARGS, "--daemon-litellm"]
    return Proc("ptb-floor", argv, directory / "floor.log", env=tls.client_env())


async def _first_reply(owner: Rig, subject: Subject, ready_at: float) -> float:
    """Send one DM as soon as the subject polls; seconds from that first poll to its reply."""
    [user] = owner.users(1)
    subject.fake.dm(user, "first")
    await wait_until(
        lambda: bool(subject.fake.calls_of("sendMessage")),
        FIRST_REPLY_TIMEOUT_S,
        f"{subject.name} first reply",
        procs=[subject.proc],
    )
    return subject.fake.calls_of("sendMessage")[0].at - ready_at
