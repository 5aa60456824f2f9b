"""Scenario slack: a burst of DMs and a concurrency wave through the real daemon vs bare slack-bolt.

Both sides get their events over Socket Mode from their own FakeSlack and answer with
``chat.postMessage``. Burst: the telegram scenario's shape (200 users, ``--dms`` DMs in all), in an
``llm`` (litellm to the fake model, zero latency) and an ``echo`` variant (``--quick``: llm only),
one rig per variant; repetitions alternate chatgate and the floor, each burst from fresh users.
Each rig starts the floor, then chatgate, and times its first reply after ready
(``bench.scenarios.first_reply``). Concurrency (llm rig): 200 users send one DM each while the
model takes 500 ms per call; ideally the whole wave takes one model latency. The FakeLLM counts
the most calls in flight per wave.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bench.runner import Context, Outcome
from bench.scenarios import first_reply
from bench.scenarios.slackrig import burst, rig
from bench.scenarios.tgrig import Backend, Burst
from bench.stats import Spec, Table, latency_ms

USERS = 200
WINDOW_PER_DM_S = 0.05  # a burst may take this long per DM before replies count as missing
SESSIONS = 200
LATENCY_S = 0.5
WAVE_TIMEOUT_S = 60.0

POST = "chat.postMessage"
SIDES = ("chatgate", "floor")


def wave_specs(reply: str = POST) -> dict[str, Spec]:
    """The concurrency wave's metrics; ``reply`` names the call a reply arrives as."""
    return {
        "wall": Spec("concurrency_wall_s", "concurrency, one DM per user: wall time", "s", "lower"),
        "ideal": Spec(
            "concurrency_wall_over_ideal", "concurrency: wall / ideal 0.5 s", "×", "lower"
        ),
        "first": Spec("concurrency_first_reply_ms", "concurrency: first push→reply", "ms", "lower"),
        "p50": Spec("concurrency_p50_ms", f"concurrency: push→{reply} p50", "ms", "lower"),
        "p99": Spec("concurrency_p99_ms", f"concurrency: push→{reply} p99", "ms", "lower"),
        "in_flight": Spec(
            "concurrency_max_model_in_flight",
            "concurrency: most model calls in flight",
            "",
            "higher",
        ),
        "cpu": Spec(
            "concurrency_cpu_ms_per_msg", "concurrency: process CPU per message", "ms", "lower"
        ),
        "lost": Spec("concurrency_missing", "concurrency: missing replies", "", "lower", 0.0),
    }


def burst_specs(variant: Backend, reply: str = POST, api: str = "Web API") -> dict[str, Spec]:
    tag = f"{variant}: "
    return {
        "wall": Spec(f"{variant}_wall_s", tag + "wall time", "s", "lower"),
        "rate": Spec(f"{variant}_msgs_per_s", tag + "msgs/s", "1/s", "higher"),
        "p50": Spec(f"{variant}_p50_ms", tag + f"push→{reply} p50", "ms", "lower"),
        "p99": Spec(f"{variant}_p99_ms", tag + f"push→{reply} p99", "ms", "lower"),
        "cpu": Spec(f"{variant}_cpu_ms_per_msg", tag + "process CPU per message", "ms", "lower"),
        "calls": Spec(
            f"{variant}_api_calls_per_msg", tag + f"{api} calls per message", "", "lower"
        ),
        "lost": Spec(f"{variant}_missing", tag + "missing replies", "", "lower", 0.0),
        "dups": Spec(f"{variant}_duplicates", tag + "duplicate replies", "", "lower", 0.0),
    }


def summary(result: Burst) -> dict[str, object]:
    """A burst's diagnostics, with Slack's name for the API calls it made."""
    out = result.summary()
    out["web_api_calls"] = out.pop("bot_api_calls")
    return out


def record_burst(
    table: Table, variant: Backend, gate: Burst, floor: Burst, spec: dict[str, Spec] | None = None
) -> None:
    spec = spec or burst_specs(variant)
    table.add(spec["wall"], gate.wall_s, floor.wall_s)
    table.add(spec["rate"], gate.msgs_per_s, floor.msgs_per_s)
    g50, g99 = latency_ms(gate.latencies_s)
    f50, f99 = latency_ms(floor.latencies_s)
    table.add(spec["p50"], g50, f50)
    table.add(spec["p99"], g99, f99)
    table.add(spec["cpu"], gate.cpu_ms_per_msg, floor.cpu_ms_per_msg)
    table.add(spec["calls"], gate.api_calls_per_msg, floor.api_calls_per_msg)
    table.add(spec["lost"], gate.missing, floor.missing)
    table.add(spec["dups"], gate.duplicates, floor.duplicates)


def record_wave(
    table: Table,
    gate: Burst,
    floor: Burst,
    in_flight: tuple[int, int],
    spec: dict[str, Spec] | None = None,
) -> None:
    spec = spec or wave_specs()
    table.add(spec["wall"], gate.wall_s, floor.wall_s)
    table.add(spec["ideal"], gate.wall_s / LATENCY_S, floor.wall_s / LATENCY_S)
    first = (min(gate.latencies_s) * 1000.0, min(floor.latencies_s) * 1000.0)
    table.add(spec["first"], *first)
    g50, g99 = latency_ms(gate.latencies_s)
    f50, f99 = latency_ms(floor.latencies_s)
    table.add(spec["p50"], g50, f50)
    table.add(spec["p99"], g99, f99)
    table.add(spec["in_flight"], *in_flight)
    table.add(spec["cpu"], gate.cpu_ms_per_msg, floor.cpu_ms_per_msg)
    table.add(spec["lost"], gate.missing, floor.missing)


@dataclass(frozen=True)
class Platform:
    """What the burst and concurrency shapes need of one chat platform's rig."""

    rig: Callable[[Context, Backend, contextlib.AsyncExitStack], Awaitable[Any]]
    burst: Callable[..., Awaitable[Burst]]
    summary: Callable[[Burst], dict[str, object]]
    burst_specs: Callable[[Backend], dict[str, Spec]]
    wave_specs: dict[str, Spec]
    ready: str  # what counts as ready for the first-reply row


SLACK = Platform(rig, burst, summary, burst_specs, wave_specs(), "socket open")


async def measure(ctx: Context, platform: Platform) -> tuple[Table, dict[str, Any]]:
    """Bursts per variant (llm, echo; --quick: llm only, one rig, one import), alternating
    chatgate and the floor, each from fresh users; then the concurrency wave on the llm rig."""
    users = ctx.pick(USERS, 20)
    per_user = max(1, ctx.pick(ctx.telegram_dms, 100) // users)
    table = Table()
    extra: dict[str, Any] = {}
    for variant in ("llm",) if ctx.quick else ("llm", "echo"):
        async with contextlib.AsyncExitStack() as stack:
            subjects = await platform.rig(ctx, variant, stack)
            table.add(first_reply.spec(platform.ready, variant), *subjects.first_reply_s)
            extra[f"{variant}_first_reply_s"] = dict(
                zip(SIDES, subjects.first_reply_s, strict=True)
            )
            runs: list[dict[str, Any]] = []
            for rep in range(ctx.reps):
                kwargs: dict[str, Any] = {"users": users, "per_user": per_user, "tag": f"r{rep}"}
                within = max(20.0, WINDOW_PER_DM_S * users * per_user)
                gate = await platform.burst(subjects, subjects.chatgate, within_s=within, **kwargs)
                floor = await platform.burst(subjects, subjects.floor, within_s=within, **kwargs)
                record_burst(table, variant, gate, floor, platform.burst_specs(variant))
                runs.append({"chatgate": platform.summary(gate), "floor": platform.summary(floor)})
            if variant == "llm":
                extra["concurrency"] = await _concurrency(ctx, table, subjects, platform)
            extra[variant] = runs
    return table, extra


def shape_params(ctx: Context) -> dict[str, Any]:
    users = ctx.pick(USERS, 20)
    per_user = max(1, ctx.pick(ctx.telegram_dms, 100) // users)
    return {
        "dms": users * per_user,
        "users": users,
        "per_user": per_user,
        "fake_llm_latency_s": 0.0,
        "concurrency_sessions": ctx.pick(SESSIONS, 20),
        "concurrency_llm_latency_s": LATENCY_S,
        "reps": ctx.reps,
    }


async def scenario(ctx: Context) -> Outcome:
    table, extra = await measure(ctx, SLACK)
    params = {
        **shape_params(ctx),
        "transport": "Socket Mode (events) + Web API over plain HTTP, FakeSlack in the bench",
        "floor": "bare slack-bolt AsyncApp + AsyncSocketModeHandler, process_before_response, "
        "one chat.postMessage per DM (litellm or echo)",
        "chatgate": "daemon, channels.slack mode socket, dm_policy open, rate limits off",
    }
    return Outcome(table, params, extra)


async def _concurrency(
    ctx: Context, table: Table, subjects: Any, platform: Platform
) -> list[dict[str, Any]]:
    """One DM from each of ``SESSIONS`` new users while the model takes LATENCY_S per call."""
    llm = subjects.llm
    assert llm is not None
    sessions = ctx.pick(SESSIONS, 20)
    runs: list[dict[str, Any]] = []
    await llm.configure(ctx.http, LATENCY_S)
    try:
        for rep in range(ctx.reps):
            kwargs: dict[str, Any] = {"users": sessions, "per_user": 1, "tag": f"c{rep}"}
            waves: list[Burst] = []
            peaks: list[int] = []
            for subject in (subjects.chatgate, subjects.floor):
                await llm.reset(ctx.http)
                wave = await platform.burst(subjects, subject, within_s=WAVE_TIMEOUT_S, **kwargs)
                waves.append(wave)
                peaks.append((await llm.stats(ctx.http))["max_in_flight"])
            record_wave(table, waves[0], waves[1], (peaks[0], peaks[1]), platform.wave_specs)
            runs.append(
                {
                    "chatgate": {**platform.summary(waves[0]), "max_model_in_flight": peaks[0]},
                    "floor": {**platform.summary(waves[1]), "max_model_in_flight": peaks[1]},
                }
            )
    finally:
        await llm.configure(ctx.http, 0.0)
    return runs
