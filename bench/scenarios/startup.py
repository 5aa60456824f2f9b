"""Scenario 6, startup: spawn → /readyz 200 and spawn → first getUpdates at the fake Bot API.

chatgate runs with telegram + webhook configured, once with an echo default agent (its own startup:
the ≤ 1.5 s target) and once with a litellm default agent on an ``openai/`` model, as shipped: that
one warms its route (the openai SDK; litellm is not imported) before its channels start, so ready
means the first message is answered at once. Floors do the same job: the bare aiohttp HMAC server
(spawn → first 200; with litellm imported first for the litellm row) and the bare PTB bot in llm
mode, which imports litellm before its first getUpdates.
"""

from __future__ import annotations

import contextlib
import time

from bench.configs import (
    FLOOR_MODEL_ARGS,
    HOOK_PATH,
    WEBHOOK_SECRET,
    DaemonConfig,
    telegram_api_base,
)
from bench.procs import PYTHON, Proc, daemon, free_port, http_status, wait_until
from bench.runner import Context, Outcome
from bench.stats import Spec, Table
from tests.fakes.telegram import TOKEN, FakeTelegram

READY = Spec("ready_s", "spawn → /readyz 200 (echo agent)", "s", "lower", 1.5)
READY_LLM = Spec("ready_llm_s", "spawn → /readyz 200 (litellm agent, warmed)", "s", "lower")
FIRST_POLL = Spec("first_poll_s", "spawn → first getUpdates (litellm agent)", "s", "lower")
STOP = Spec("stop_s", "SIGTERM → exit (idle)", "s", "lower")
TIMEOUT_S = 60.0
UNUSED_MODEL_BASE = "http://127.0.0.1:9/v1"  # never called: no turn runs in this scenario


async def _ready_after_spawn(ctx: Context, proc: Proc, port: int) -> float:
    async def ready() -> bool:
        return await http_status(ctx.http, f"http://127.0.0.1:{port}/readyz") == 200

    at = await wait_until(ready, TIMEOUT_S, f"{proc.name} /readyz", procs=[proc], interval=0.005)
    return at - proc.spawned_at


async def _first_poll(fake: FakeTelegram, proc: Proc, start_index: int) -> float:
    def polled() -> bool:
        return any(c.method.lower() == "getupdates" for c in fake.calls[start_index:])

    await wait_until(
        polled, TIMEOUT_S, f"{proc.name} first getUpdates", procs=[proc], interval=0.005
    )
    first = next(c for c in fake.calls[start_index:] if c.method.lower() == "getupdates")
    return first.at - proc.spawned_at


async def _timed_stop(proc: Proc) -> float:
    began = time.monotonic()
    await proc.stop()
    return time.monotonic() - began


async def _chatgate(ctx: Context, fake: FakeTelegram, rep: int) -> tuple[float, ...]:
    """Spawn → /readyz with an echo agent; then, with litellm: /readyz, first poll and stop."""
    port = free_port()
    echo = DaemonConfig(port, telegram_base=telegram_api_base(fake.base_url), webhook=True)
    proc = daemon(echo.write(ctx.scratch(f"startup/chatgate-echo{rep}")))
    try:
        await proc.start()
        ready_echo = await _ready_after_spawn(ctx, proc, port)
    finally:
        await proc.stop()
    port = free_port()
    config = DaemonConfig(
        port,
        llm_base=UNUSED_MODEL_BASE,
        telegram_base=telegram_api_base(fake.base_url),
        webhook=True,
    ).write(ctx.scratch(f"startup/chatgate{rep}"))
    proc = daemon(config)
    start_index = len(fake.calls)
    try:
        await proc.start()
        ready = await _ready_after_spawn(ctx, proc, port)
        first_poll = await _first_poll(fake, proc, start_index)
    finally:
        stop = await _timed_stop(proc)
    return ready_echo, ready, first_poll, stop


async def _hmac_ready(ctx: Context, name: str, extra: list[str]) -> float:
    port = free_port()
    argv = [PYTHON, "-m", "bench.floors.hmac_echo", "--port", str(port)]
    argv += ["--secret", WEBHOOK_SECRET, "--path", HOOK_PATH, *extra]
    floor = Proc("hmac-floor", argv, ctx.scratch("startup") / f"{name}.log")
    try:
        await floor.start()
        return await _ready_after_spawn(ctx, floor, port)
    finally:
        await floor.stop()


async def _floors(ctx: Context, fake: FakeTelegram, rep: int) -> tuple[float, ...]:
    workdir = ctx.scratch(f"startup/floor{rep}")
    ready = await _hmac_ready(ctx, f"hmac{rep}", [])
    ready_llm = await _hmac_ready(ctx, f"hmac-litellm{rep}", ["--import-litellm"])
    ptb_argv = [PYTHON, "-m", "bench.floors.ptb_echo", "--base-url", fake.base_url]
    ptb_argv += ["--token", TOKEN, "--mode", "llm", "--llm-base", UNUSED_MODEL_BASE]
    ptb_argv += [*FLOOR_MODEL_ARGS, "--daemon-litellm"]
    ptb_floor = Proc("ptb-floor", ptb_argv, workdir / "ptb.log")
    start_index = len(fake.calls)
    try:
        await ptb_floor.start()
        first_poll = await _first_poll(fake, ptb_floor, start_index)
    finally:
        stop = await _timed_stop(ptb_floor)
    return ready, ready_llm, first_poll, stop


async def scenario(ctx: Context) -> Outcome:
    table = Table()
    async with contextlib.AsyncExitStack() as stack:
        fake = await stack.enter_async_context(FakeTelegram())
        for rep in range(ctx.reps):
            gate = await _chatgate(ctx, fake, rep)
            floor = await _floors(ctx, fake, rep)
            specs = (READY, READY_LLM, FIRST_POLL, STOP)
            for spec, ours, bare in zip(specs, gate, floor, strict=True):
                table.add(spec, ours, bare)
    params = {
        "chatgate": "telegram (polling the fake) + webhook routes; echo, then litellm default agent",
        "floors": "ready: bare aiohttp HMAC server (litellm row: importing litellm first); "
        "first poll and stop: bare PTB bot, llm mode (imports litellm before polling)",
        "reps": ctx.reps,
    }
    return Outcome(table, params)
