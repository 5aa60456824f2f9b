"""Scenario 2, telegram: a burst of DMs through the real daemon vs a bare PTB bot.

Two variants: ``llm`` (litellm to the fake model, zero latency) and ``echo`` (no model client), so
the SDK/transport cost and the model-client cost can be told apart. Repetitions alternate between
chatgate and the floor, each burst from fresh users.
"""

from __future__ import annotations

import contextlib
from typing import Any

from bench.runner import Context, Outcome
from bench.scenarios.tgrig import Backend, Burst, Rig, burst, rig, shared_llm_rig
from bench.stats import Spec, Table, latency_ms

USERS = 200
WINDOW_PER_DM_S = 0.05  # a burst may take this long per DM before replies count as missing


def specs(variant: Backend) -> dict[str, Spec]:
    tag = f"{variant}: "
    return {
        "wall": Spec(f"{variant}_wall_s", tag + "wall time", "s", "lower"),
        "rate": Spec(f"{variant}_msgs_per_s", tag + "msgs/s", "1/s", "higher"),
        "p50": Spec(f"{variant}_p50_ms", tag + "update→sendMessage p50", "ms", "lower"),
        "p99": Spec(f"{variant}_p99_ms", tag + "update→sendMessage p99", "ms", "lower"),
        "lost": Spec(f"{variant}_missing", tag + "missing replies", "", "lower", 0.0),
        "dups": Spec(f"{variant}_duplicates", tag + "duplicate replies", "", "lower", 0.0),
    }


def record(table: Table, variant: Backend, gate: Burst, floor: Burst) -> None:
    spec = specs(variant)
    table.add(spec["wall"], gate.wall_s, floor.wall_s)
    table.add(spec["rate"], gate.msgs_per_s, floor.msgs_per_s)
    g50, g99 = latency_ms(gate.latencies_s)
    f50, f99 = latency_ms(floor.latencies_s)
    table.add(spec["p50"], g50, f50)
    table.add(spec["p99"], g99, f99)
    table.add(spec["lost"], gate.missing, floor.missing)
    table.add(spec["dups"], gate.duplicates, floor.duplicates)


async def scenario(ctx: Context) -> Outcome:
    users = ctx.pick(USERS, 20)
    per_user = max(1, ctx.pick(ctx.telegram_dms, 100) // users)
    table = Table()
    extra: dict[str, Any] = {}
    for variant in ("llm", "echo"):
        async with contextlib.AsyncExitStack() as own:
            subjects = (
                await shared_llm_rig(ctx) if variant == "llm" else await rig(ctx, "echo", own)
            )
            extra[variant] = await _measure(ctx, table, subjects, users, per_user)
    params = {
        "dms": users * per_user,
        "users": users,
        "per_user": per_user,
        "fake_llm_latency_s": 0.0,
        "floor": "python-telegram-bot Application, concurrent_updates(True), long polling",
        "chatgate": "daemon, dm_policy open, rate limits off, mid_turn queue",
        "reps": ctx.reps,
    }
    return Outcome(table, params, extra)


async def _measure(
    ctx: Context, table: Table, subjects: Rig, users: int, per_user: int
) -> dict[str, Any]:
    bursts: dict[str, list[dict[str, object]]] = {"chatgate": [], "floor": []}
    for rep in range(ctx.reps):
        results = []
        for subject in (subjects.chatgate, subjects.floor):
            result = await burst(
                subjects,
                subject,
                users=users,
                per_user=per_user,
                tag=f"r{rep}",
                within_s=max(20.0, WINDOW_PER_DM_S * users * per_user),
            )
            bursts[subject.name].append(result.summary())
            results.append(result)
        record(table, subjects.backend, results[0], results[1])
    return {"chatgate_restarted_before": subjects.restarted, "bursts": bursts}
