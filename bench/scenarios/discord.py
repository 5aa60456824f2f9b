"""Scenario discord: a burst of DMs and a concurrency wave through the real daemon vs bare discord.py.

Burst: ``llm`` (litellm to the fake model, zero latency) and ``echo`` variants (``--quick``: llm
only), 200 users, one rig per variant; repetitions alternate chatgate and the floor, each
burst from fresh users. Each rig starts the floor, then chatgate, and times its first reply
after ready (``bench.scenarios.first_reply``).
Concurrency: 200 users send one DM each while the model takes 500 ms per call; ideally the
whole wave takes one model latency, so ``wall / ideal`` says how far each side is from that.
"""

from __future__ import annotations

import contextlib
from typing import Any

from bench.runner import Context, Outcome
from bench.scenarios import first_reply
from bench.scenarios.dcrig import burst, rig
from bench.scenarios.telegram import record
from bench.stats import Spec, Table, latency_ms

USERS = 200
PER_USER = 2
WINDOW_PER_DM_S = 0.05
SESSIONS = 200
LATENCY_S = 0.5
WALL = Spec("concurrency_wall_s", "concurrency, one DM per user: wall time", "s", "lower")
IDEAL = Spec("concurrency_wall_over_ideal", "concurrency: wall / ideal 0.5 s", "×", "lower")
P99 = Spec("concurrency_p99_ms", "concurrency: DM→reply p99", "ms", "lower")
LOST = Spec("concurrency_missing", "concurrency: missing replies", "", "lower", 0.0)


async def scenario(ctx: Context) -> Outcome:
    users = ctx.pick(USERS, 20)
    per_user = ctx.pick(PER_USER, 1)
    table = Table()
    extra: dict[str, Any] = {}
    for variant in ("llm",) if ctx.quick else ("llm", "echo"):  # --quick: one rig, one import
        async with contextlib.AsyncExitStack() as stack:
            subjects = await rig(ctx, variant, stack)
            table.add(first_reply.spec("gateway session up", variant), *subjects.first_reply_s)
            runs: list[dict[str, Any]] = []
            for rep in range(ctx.reps):
                kwargs: dict[str, Any] = {
                    "users": users,
                    "per_user": per_user,
                    "tag": f"{variant}{rep}",
                }
                within = max(20.0, WINDOW_PER_DM_S * users * per_user)
                gate = await burst(subjects, subjects.chatgate, within_s=within, **kwargs)
                floor = await burst(subjects, subjects.floor, within_s=within, **kwargs)
                record(table, variant, gate, floor)
                runs.append({"chatgate": gate.summary(), "floor": floor.summary()})
            if variant == "llm":
                runs += await _concurrency(ctx, table, subjects)
            extra[variant] = runs
    params = {
        "dms": users * per_user,
        "users": users,
        "concurrency_sessions": ctx.pick(SESSIONS, 20),
        "concurrency_llm_latency_s": LATENCY_S,
        "floor": "bare discord.py AutoShardedClient, one channel.send per DM (litellm or echo)",
        "chatgate": "daemon, dm_policy open, rate limits off, mid_turn queue",
        "reps": ctx.reps,
    }
    return Outcome(table, params, extra)


async def _concurrency(ctx: Context, table: Table, subjects: Any) -> list[dict[str, Any]]:
    sessions = ctx.pick(SESSIONS, 20)
    runs = []
    await subjects.llm.configure(ctx.http, LATENCY_S)
    try:
        for rep in range(ctx.reps):
            kwargs: dict[str, Any] = {"users": sessions, "per_user": 1, "tag": f"c{rep}"}
            gate = await burst(subjects, subjects.chatgate, within_s=60.0, **kwargs)
            floor = await burst(subjects, subjects.floor, within_s=60.0, **kwargs)
            table.add(WALL, gate.wall_s, floor.wall_s)
            table.add(IDEAL, gate.wall_s / LATENCY_S, floor.wall_s / LATENCY_S)
            table.add(P99, latency_ms(gate.latencies_s)[1], latency_ms(floor.latencies_s)[1])
            table.add(LOST, gate.missing, floor.missing)
            runs.append({"concurrency": {"chatgate": gate.summary(), "floor": floor.summary()}})
    finally:
        await subjects.llm.configure(ctx.http, 0.0)
    return runs
