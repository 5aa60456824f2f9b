"""Scenario matrix: a burst of DMs through the real daemon vs a bare mautrix bot, both on one real
Synapse (SQLite, loopback) started by the bench.

Each subject has its own bot account; one driver user per subject opens ``ROOMS`` DMs with its
bot, then sends ``MESSAGES`` texts spread over them (``SEND_CONCURRENCY`` in flight) and waits,
bounded, for every answer through its own `/sync`. ``llm`` (litellm to the fake model, zero
latency) and ``echo`` variants (``--quick``: llm only). **msgs/s** = messages / (last answer −
first send); **CPU/msg** = the subject process's CPU from the first send until it went quiet,
per message. Synapse is the same for both and is most of the time: read the ratio. The floor,
then chatgate, start one at a time and each answers its first DM, opened the moment it is ready
(first reply after ready: the room's creation and the bot's join are in it, for both).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
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
)
from bench.runner import Context, Outcome
from bench.scenarios import first_reply
from bench.scenarios.first_reply import TIMEOUT_S
from bench.stats import Spec, Table
from tests.channels.matrix.support import Person
from tests.support.synapse import MatrixUser, Synapse

ROOMS = 10
MESSAGES = 100
SEND_CONCURRENCY = 16
WITHIN_S = 120.0
QUIET_S = 1.0
SPECS = {
    v: (
        Spec(f"{v}_msgs_per_s", f"{v}: DMs answered per second", "1/s", "higher"),
        Spec(f"{v}_cpu_ms_per_msg", f"{v}: subject CPU per DM", "ms", "lower"),
        Spec(f"{v}_missing", f"{v}: missing answers", "", "lower", 0.0),
    )
    for v in ("llm", "echo")
}
FIRST = {
    v: first_reply.spec("/readyz; floor: first sync; DM room opened then", v)
    for v in ("llm", "echo")
}


class Subject:
    def __init__(self, name: str, bot: MatrixUser, proc: Proc, driver: Person) -> None:
        self.name, self.bot, self.proc, self.driver = name, bot, proc, driver
        self.rooms: list[str] = []

    def answered(self, tag: str) -> int:
        return sum(
            1
            for e in self.driver.messages_from(self.bot.user_id)
            if tag in str(e.get("content", {}).get("body", ""))
        )


async def _rooms(subject: Subject, count: int) -> None:
    for _ in range(count):
        room = await subject.driver.dm(subject.bot.user_id)
        await subject.driver.wait_joined(room, subject.bot.user_id, timeout=60)
        subject.rooms.append(room)


async def _first_contact(subject: Subject, ready_at: float) -> float:
    """The subject's first DM room opened the moment it is ready and one message sent in it as
    soon as the bot joined (imports done, connections warm); seconds from ready to the answer
    at the driver's sync."""
    await _rooms(subject, 1)
    await subject.driver.send(subject.rooms[0], "warm-up")
    await subject.driver.wait(lambda: subject.answered("warm-up") >= 1, timeout=TIMEOUT_S)
    return time.monotonic() - ready_at


async def _burst(subject: Subject, count: int, tag: str) -> dict[str, float]:
    gate = asyncio.Semaphore(SEND_CONCURRENCY)
    cpu_before = cpu_seconds(subject.proc.pid)

    async def send(n: int) -> None:
        async with gate:
            await subject.driver.send(subject.rooms[n % len(subject.rooms)], f"{tag} m{n}")

    first = time.monotonic()
    await asyncio.gather(*(send(n) for n in range(count)))
    with contextlib.suppress(TimeoutError):
        await subject.driver.wait(lambda: subject.answered(tag) >= count, timeout=WITHIN_S)
    wall = time.monotonic() - first
    answered = subject.answered(tag)
    await asyncio.sleep(QUIET_S)
    cpu = cpu_seconds(subject.proc.pid) - cpu_before
    return {
        "msgs_per_s": answered / wall if wall > 0 else 0.0,
        "cpu_ms_per_msg": cpu * 1000.0 / max(answered, 1),
        "missing": float(count - answered),
        "wall_s": wall,
    }


async def _subjects(
    ctx: Context, server: Synapse, variant: str, stack: contextlib.AsyncExitStack, table: Table
) -> tuple[Subject, Subject]:
    """The floor, then chatgate, started one at a time, each answering its first DM (opened the
    moment it is ready: the first-reply row and the warm-up), then their other DM rooms."""
    workdir = ctx.scratch(f"matrix-{variant}")
    llm: FakeLLMProc | None = None
    if variant == "llm":
        llm = await stack.enter_async_context(started(FakeLLMProc(workdir / "fake-llm.log")))
    gate_bot, floor_bot = await server.register("gatebot"), await server.register("floorbot")
    drivers = []
    for name in ("chatgate", "floor"):
        driver = await Person(server, await server.register(f"driver{name}")).start()
        stack.push_async_callback(driver.stop)
        drivers.append(driver)
    argv = [PYTHON, "-m", "bench.floors.mautrix_echo", "--homeserver", server.base_url]
    argv += ["--user-id", floor_bot.user_id, "--access-token", floor_bot.access_token]
    argv += ["--mode", variant]
    if llm is not None:
        argv += ["--llm-base", llm.base_url, *FLOOR_MODEL_ARGS]
    floor_proc = await stack.enter_async_context(
        started(AnnouncedProc("matrix-floor", argv, workdir / "floor.log"))
    )
    floor = Subject("floor", floor_bot, floor_proc, drivers[1])
    floor_first = await _first_contact(floor, floor_proc.ready_at)
    section = {
        "homeserver": server.base_url,
        "user_id": gate_bot.user_id,
        "access_token": gate_bot.access_token,
        "device_id": gate_bot.device_id,
        "dm_policy": "open",
        "auto_join": "all",
    }
    port = free_port()
    config = DaemonConfig(port, llm_base=llm.base_url if llm else None, matrix=section)
    gate_proc = await stack.enter_async_context(started(daemon(config.write(workdir / "chatgate"))))
    ready_at = await wait_ready(ctx.http, gate_proc, port, TIMEOUT_S)
    gate = Subject("chatgate", gate_bot, gate_proc, drivers[0])
    gate_first = await _first_contact(gate, ready_at)
    table.add(FIRST[variant], gate_first, floor_first)
    rooms = ctx.pick(ROOMS, 2)
    await asyncio.gather(*(_rooms(s, rooms - 1) for s in (gate, floor)))
    return gate, floor


async def scenario(ctx: Context) -> Outcome:
    table = Table()
    extra: dict[str, Any] = {}
    count = ctx.pick(MESSAGES, 10)
    server = await asyncio.to_thread(Synapse.launch)
    try:
        for variant in ("llm",) if ctx.quick else ("llm", "echo"):
            async with contextlib.AsyncExitStack() as stack:
                gate, floor = await _subjects(ctx, server, variant, stack, table)
                runs = []
                for rep in range(ctx.reps):
                    g = await _burst(gate, count, f"{variant}{rep}g")
                    f = await _burst(floor, count, f"{variant}{rep}f")
                    rate, cpu, missing = SPECS[variant]
                    table.add(rate, g["msgs_per_s"], f["msgs_per_s"])
                    table.add(cpu, g["cpu_ms_per_msg"], f["cpu_ms_per_msg"])
                    table.add(missing, g["missing"], f["missing"])
                    runs.append({"chatgate": g, "floor": f})
                extra[variant] = runs
    finally:
        await asyncio.to_thread(server.stop)
    params = {
        "messages": count,
        "rooms": ctx.pick(ROOMS, 2),
        "send_concurrency": SEND_CONCURRENCY,
        "homeserver": "Synapse (SQLite, loopback), one for both subjects",
        "floor": "bare mautrix bot: own /sync loop, one reply per message (litellm or echo), "
        "no journal, dedupe, sessions, receipts or typing",
        "chatgate": "daemon, channels.matrix defaults (read receipts, typing), dm_policy open",
        "reps": ctx.reps,
    }
    return Outcome(table, params, extra)
