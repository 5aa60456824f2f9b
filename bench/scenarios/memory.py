"""Scenario 5, memory: idle RSS, bytes per warm session, and RSS after forced eviction.

The store is seeded directly (N sessions × 20 messages) before the daemon starts; each session is
then touched once through a webhook route keyed by ``payload.s`` so it is loaded warm. Idle RSS is
taken after one Telegram turn to the model (the openai SDK route: litellm is not imported, the
floor imports it). Eviction is forced by a SIGHUP reload: first the documented lever (a low
``memory.limit_mb``), and if that does not evict, a tiny ``memory.headroom_ratio`` against a large
configured limit. With ``--quick`` there is no model (an echo turn, the floor in echo mode), so
the idle row is a smoke value only.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.configs import (
    FLOOR_MODEL_ARGS,
    SESSION_HOOK_PATH,
    WEBHOOK_SECRET,
    DaemonConfig,
    telegram_api_base,
)
from bench.procs import (
    PYTHON,
    BenchError,
    FakeLLMProc,
    Proc,
    daemon,
    free_port,
    rss,
    started,
    wait_ready,
    wait_until,
)
from bench.runner import Context, Outcome
from bench.scenarios.webhook import hammer
from bench.stats import Spec, Table
from chatgate.channels.signatures import sign
from chatgate.state.sqlite.db import connect
from chatgate.state.sqlite.schema import apply_schema
from tests.fakes.telegram import TOKEN, FakeTelegram

MESSAGES = 20
USER_TEXT = "Could you summarise what we discussed about the deploy pipeline?"
BOT_TEXT = ("Sure: the deploy failed at step 3 because the migration lock was held; " * 3)[:200]
LARGE_LIMIT_MB = 65_536
MONITOR_INTERVAL_S = 0.25
SETTLE_S = 1.0
KB = 1024.0
MB = 1024.0 * 1024.0

IDLE = Spec("idle_rss_anon_mb", "idle RssAnon (telegram + webhook)", "MB", "lower")
IDLE_VM = Spec("idle_vmrss_mb", "idle VmRSS", "MB", "lower")
PER_SESSION = Spec("kb_per_warm_session", "RssAnon per warm session", "KB", "lower", 30.0)
PER_SESSION_VM = Spec("kb_per_warm_session_vmrss", "VmRSS per warm session", "KB", "lower")
AFTER_EVICT = Spec("evicted_rss_anon_mb", "RssAnon after forced eviction", "MB", "lower")
RECLAIMED = Spec("reclaimed_kb_per_session", "RssAnon returned per evicted session", "KB", "higher")


def session_key(i: int) -> str:
    return f"echo:webhook:sessions:s{i}"  # agent:channel:route:payload.s (see sessions.session_key)


def seed(db_path: Path, sessions: int) -> None:
    """Write ``sessions`` transcripts of MESSAGES messages each, as the daemon would have."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(db_path)
    try:
        apply_schema(conn)
        now = time.time()
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO sessions(key, epoch, created_at, updated_at, message_count)"
            " VALUES (?, 0, ?, ?, ?)",
            ((session_key(i), now, now, MESSAGES) for i in range(sessions)),
        )
        conn.executemany(
            "INSERT INTO messages(session_key, epoch, role, content, name, source, at)"
            " VALUES (?, 0, ?, ?, ?, ?, ?)",
            (
                (session_key(i), *_message(i, j), now)
                for i in range(sessions)
                for j in range(MESSAGES)
            ),
        )
        conn.execute("COMMIT")
    finally:
        conn.close()


def _message(i: int, j: int) -> tuple[str, str, str | None, str]:
    source = f"seed:{i}:{j // 2}"
    if j % 2 == 0:
        return "user", f"{USER_TEXT} ({i}/{j})", "Alice", source
    return "assistant", f"{BOT_TEXT} ({i}/{j})", None, source


def floor_kb_per_session(sessions: int = 1000) -> float:
    """The same transcripts as plain Python data (key → list of (role, content, name, source))."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = {session_key(i): [_message(i, j) for j in range(MESSAGES + 2)] for i in range(sessions)}
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del held
    return used / sessions / KB


async def metric(ctx: Context, port: int, name: str) -> float:
    async with ctx.http.get(f"http://127.0.0.1:{port}/metrics") as resp:
        text = await resp.text()
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def telegram_turn(fake: FakeTelegram, proc: Proc, user: int) -> None:
    before = len(fake.calls_of("sendMessage"))
    fake.dm(user, "hello")
    await wait_until(
        lambda: len(fake.calls_of("sendMessage")) > before,
        120.0,
        f"{proc.name} telegram turn",
        procs=[proc],
        interval=0.05,
    )


async def touch_all(port: int, sessions: int, check: Context) -> None:
    url = f"http://127.0.0.1:{port}{SESSION_HOOK_PATH}"
    batch = []
    for i in range(sessions):
        body = f'{{"s": "s{i}", "text": "touch {i}"}}'.encode()
        headers = sign("generic", WEBHOOK_SECRET, body, time.time())
        headers.update({"Content-Type": "application/json", "X-Request-Id": f"touch-{i}"})
        batch.append((body, headers))
    first_body, first_headers = batch[0]
    async with check.http.post(url, data=first_body, headers=first_headers) as resp:
        answer = await resp.json()
    if answer.get("session") != session_key(0):
        raise BenchError(f"seeded key {session_key(0)!r} != daemon session {answer!r}")
    load = await hammer(url, batch[1:], 32)
    if load.errors:
        raise BenchError(f"{load.errors} touch requests failed")


async def scenario(ctx: Context) -> Outcome:
    sessions = ctx.pick(10_000, 500)
    table = Table()
    extra: dict[str, list[Any]] = {"levers": [], "warm_sessions": []}
    floor_kb = floor_kb_per_session()
    async with contextlib.AsyncExitStack() as stack:
        llm_base: str | None = None
        if not ctx.quick:  # --quick runs without the model (smoke numbers only)
            llm = FakeLLMProc(ctx.scratch("memory") / "fake-llm.log")
            llm_base = (await stack.enter_async_context(started(llm))).base_url
        floor = await floor_idle(ctx, llm_base)
        for rep in range(ctx.reps):
            row = await _one(ctx, llm_base, sessions, rep, extra)
            table.add(IDLE, row["idle_anon"], floor["RssAnon"] / MB)
            table.add(IDLE_VM, row["idle_vm"], floor["VmRSS"] / MB)
            table.add(PER_SESSION, row["kb_anon"], floor_kb)
            table.add(PER_SESSION_VM, row["kb_vm"])
            table.add(AFTER_EVICT, row["evicted_anon"])
            table.add(RECLAIMED, row["reclaimed_kb"])
    params = {
        "sessions": sessions,
        "messages_per_session": MESSAGES,
        "message_chars": {"user": len(_message(0, 0)[1]), "assistant": len(_message(0, 1)[1])},
        "touch": "one webhook turn per session (echo agent), so 22 messages end up warm",
        "model_turn": not ctx.quick,
        "floor_idle": "bare PTB bot (llm mode, litellm imported) after one answered message",
        "floor_per_session": "the same transcripts as plain tuples in a dict (tracemalloc)",
        "reps": ctx.reps,
    }
    return Outcome(table, params, extra)


async def floor_idle(ctx: Context, llm_base: str | None) -> dict[str, int]:
    """The PTB floor's idle RSS: taken by the telegram rig when it ran, else measured here
    (in echo mode when there is no model server)."""
    cached = ctx.cache.get("idle_rss")
    if isinstance(cached, dict) and "floor" in cached:
        return dict(cached["floor"])
    workdir = ctx.scratch("memory/floor")
    async with contextlib.AsyncExitStack() as stack:
        fake = await stack.enter_async_context(FakeTelegram())
        argv = [PYTHON, "-m", "bench.floors.ptb_echo", "--base-url", fake.base_url]
        argv += ["--token", TOKEN, "--mode", "echo"]
        if llm_base is not None:
            argv[-1:] = ["llm", "--llm-base", llm_base, *FLOOR_MODEL_ARGS]
        floor = await stack.enter_async_context(started(Proc("ptb-floor", argv, workdir / "log")))
        await telegram_turn(fake, floor, 1)
        await asyncio.sleep(ctx.settle(SETTLE_S))
        return rss(floor.pid)


async def _one(
    ctx: Context, llm_base: str | None, sessions: int, rep: int, extra: dict[str, list[Any]]
) -> dict[str, float]:
    workdir = ctx.scratch(f"memory/rep{rep}")
    directory = workdir / "chatgate"
    seed(directory / "state" / "chatgate.db", sessions)
    port = free_port()
    out: dict[str, float] = {}
    async with contextlib.AsyncExitStack() as stack:
        fake = await stack.enter_async_context(FakeTelegram())
        config = DaemonConfig(
            port,
            llm_base=llm_base,
            telegram_base=telegram_api_base(fake.base_url),
            webhook=True,
            warm_max=sessions + 1000,
            memory={"limit_mb": LARGE_LIMIT_MB, "interval_s": MONITOR_INTERVAL_S},
        )
        proc = await stack.enter_async_context(started(daemon(config.write(directory))))
        await wait_ready(ctx.http, proc, port)
        await telegram_turn(fake, proc, 1)
        await asyncio.sleep(ctx.settle(SETTLE_S))
        idle = rss(proc.pid)
        out["idle_anon"], out["idle_vm"] = idle["RssAnon"] / MB, idle["VmRSS"] / MB

        await touch_all(port, sessions, ctx)
        await asyncio.sleep(ctx.settle(SETTLE_S))
        warm = rss(proc.pid)
        extra["warm_sessions"].append(await metric(ctx, port, "chatgate_warm_sessions"))
        out["kb_anon"] = (warm["RssAnon"] - idle["RssAnon"]) / sessions / KB
        out["kb_vm"] = (warm["VmRSS"] - idle["VmRSS"]) / sessions / KB

        lever = await _force_eviction(ctx, proc, port, config, directory, sessions)
        extra["levers"].append(lever)
        await asyncio.sleep(ctx.settle(SETTLE_S))
        evicted = rss(proc.pid)
        out["evicted_anon"] = evicted["RssAnon"] / MB
        out["reclaimed_kb"] = (warm["RssAnon"] - evicted["RssAnon"]) / sessions / KB
    return out


async def _force_eviction(
    ctx: Context, proc: Proc, port: int, config: DaemonConfig, directory: Path, sessions: int
) -> dict[str, Any]:
    """SIGHUP with a low limit_mb; if nothing is evicted, SIGHUP with a tiny headroom_ratio."""
    levers = (
        ("limit_mb=1", {"limit_mb": 1}),
        ("headroom_ratio=0.0001", {"limit_mb": LARGE_LIMIT_MB, "headroom_ratio": 0.0001}),
    )
    tried: dict[str, int] = {}
    for name, memory in levers:
        before = await metric(ctx, port, "chatgate_session_evictions_total")
        config.memory = {**memory, "interval_s": MONITOR_INTERVAL_S}
        config.write(directory)
        proc.send(signal.SIGHUP)
        # The monitor evicts at most half its candidates per pass (RSS rarely falls at once),
        # so emptying 10,000 warm sessions takes about log2(10,000) ≈ 14 passes.
        deadline = time.monotonic() + MONITOR_INTERVAL_S * 40
        evicted = 0.0
        while time.monotonic() < deadline and evicted < sessions:
            await asyncio.sleep(MONITOR_INTERVAL_S / 2)
            evicted = await metric(ctx, port, "chatgate_session_evictions_total") - before
        tried[name] = int(evicted)
        if evicted >= sessions * 0.9:
            return {"used": name, "evicted": tried}
    raise BenchError(f"no reload lever evicted the warm sessions: {tried}")
