"""Scenario 4, concurrency: 200 sessions at once while the model takes 500 ms per call.

Ideally every turn overlaps, so the whole burst takes one model latency; ``wall / ideal`` says how
far each side is from that. Both variants use the telegram scenario's litellm rig:

- telegram: 200 users send one DM each (chatgate vs the bare PTB floor, same fake Bot API);
- webhook: 200 concurrent requests with distinct ``session`` values on a signed sync route backed by
  the litellm agent, vs the floor process's bare aiohttp handler making one litellm call per
  request; this shows chatgate's own scheduling without the Telegram SDK's HTTP client.
"""

from __future__ import annotations

import json
import time
from typing import Any

from bench.configs import LLM_HOOK_PATH, WEBHOOK_SECRET
from bench.runner import Context, Outcome
from bench.scenarios.tgrig import burst, shared_llm_rig
from bench.scenarios.webhook import hammer
from bench.stats import Spec, Table, latency_ms
from chatgate.channels.signatures import sign

SESSIONS = 200
LATENCY_S = 0.5
BURST_TIMEOUT_S = 60.0

TG_WALL = Spec("telegram_wall_s", "telegram, one DM per user: wall time", "s", "lower")
TG_IDEAL = Spec("telegram_wall_over_ideal", "telegram: wall / ideal 0.5 s", "×", "lower")
TG_P99 = Spec("telegram_p99_ms", "telegram: update→sendMessage p99", "ms", "lower")
TG_LOST = Spec("telegram_missing", "telegram: missing replies", "", "lower", 0.0)
TG_CPU = Spec("telegram_cpu_ms_per_msg", "telegram: process CPU per message", "ms", "lower")
WH_WALL = Spec("webhook_wall_s", "webhook, one request per session: wall", "s", "lower")
WH_IDEAL = Spec("webhook_wall_over_ideal", "webhook: wall / ideal 0.5 s", "×", "lower")
WH_P99 = Spec("webhook_p99_ms", "webhook: request p99", "ms", "lower")
WH_ERRORS = Spec("webhook_errors", "webhook: failed answers", "", "lower", 0.0)


def session_requests(tag: str, count: int) -> list[tuple[bytes, dict[str, str]]]:
    out = []
    for i in range(count):
        body = json.dumps({"s": f"{tag}-{i}", "text": f"{tag} hello {i}"}).encode()
        headers = sign("generic", WEBHOOK_SECRET, body, time.time())
        headers.update({"Content-Type": "application/json", "X-Request-Id": f"{tag}-{i}"})
        out.append((body, headers))
    return out


async def scenario(ctx: Context) -> Outcome:
    subjects = await shared_llm_rig(ctx)
    assert subjects.llm is not None
    table = Table()
    bursts: list[dict[str, Any]] = []
    url = f"http://127.0.0.1:{subjects.port}{LLM_HOOK_PATH}"
    floor_url = f"http://127.0.0.1:{subjects.floor_port}{LLM_HOOK_PATH}"
    sessions = ctx.pick(SESSIONS, 50)
    await subjects.llm.configure(ctx.http, LATENCY_S)
    try:
        for rep in range(ctx.reps):
            kwargs: dict[str, Any] = {"users": sessions, "per_user": 1, "tag": f"c{rep}"}
            gate = await burst(subjects, subjects.chatgate, within_s=BURST_TIMEOUT_S, **kwargs)
            floor = await burst(subjects, subjects.floor, within_s=BURST_TIMEOUT_S, **kwargs)
            table.add(TG_WALL, gate.wall_s, floor.wall_s)
            table.add(TG_IDEAL, gate.wall_s / LATENCY_S, floor.wall_s / LATENCY_S)
            table.add(TG_P99, latency_ms(gate.latencies_s)[1], latency_ms(floor.latencies_s)[1])
            table.add(TG_LOST, gate.missing, floor.missing)
            table.add(TG_CPU, gate.cpu_ms_per_msg, floor.cpu_ms_per_msg)
            bursts.append({"chatgate": gate.summary(), "floor": floor.summary()})
            ours = await hammer(url, session_requests(f"w{rep}", sessions), sessions)
            bare = await hammer(floor_url, session_requests(f"w{rep}", sessions), sessions)
            ours_wall, bare_wall = sessions / ours.req_per_s, sessions / bare.req_per_s
            table.add(WH_WALL, ours_wall, bare_wall)
            table.add(WH_IDEAL, ours_wall / LATENCY_S, bare_wall / LATENCY_S)
            table.add(WH_P99, latency_ms(ours.latencies_s)[1], latency_ms(bare.latencies_s)[1])
            table.add(WH_ERRORS, ours.errors, bare.errors)
    finally:
        await subjects.llm.configure(ctx.http, 0.0)
    params = {
        "sessions": sessions,
        "fake_llm_latency_s": LATENCY_S,
        "ideal_s": LATENCY_S,
        "telegram": "one DM from each of `sessions` new users; floor: bare PTB bot",
        "webhook": "`sessions` concurrent signed sync requests, distinct session values, litellm"
        " agent; floor: bare aiohttp handler with one litellm call",
        "reps": ctx.reps,
    }
    extra = {"chatgate_restarted_before": subjects.restarted, "telegram_bursts": bursts}
    return Outcome(table, params, extra)
