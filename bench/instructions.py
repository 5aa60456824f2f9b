"""`python -m bench.instructions SUBJECT`: instructions per message, chatgate vs its floor.

A load-independent companion to the timed scenarios (whose ratios swing by tens of percent on a
shared machine): the subject runs under ``valgrind --tool=callgrind --instr-atstart=no``; after a
warm-up, ``callgrind_control -i on`` starts counting, the load runs, ``-i off`` stops it, and the
count of instructions (every thread of the process) is divided by the messages answered. The
same code gives the same count within about 0.1 %, whatever the load.

- ``webhook``: the webhook scenario's signed sync route (echo agent, one-shot sessions) vs the
  bare aiohttp HMAC handler, ``--count`` requests at concurrency 32.
- ``whatsapp``: signed WhatsApp webhooks (``--count`` / 3 users, 3 messages each, at most 16 in
  flight), each answered with a read receipt and a quoted reply, vs the bare aiohttp bot.
- ``slack``: DMs over Socket Mode (``--count`` / 3 users, 3 DMs each, pushed at once), each
  answered with ``chat.postMessage``, vs the bare slack-bolt app (both echo).
- ``pipeline``: the in-process pipeline scenario (``bench/scenarios/pipeline.py``): ``--count``
  turns over ``--sessions`` sessions (default 1) through a real Gateway with SQLite, vs the same
  channel calling the echo agent directly.
- ``telegram``: DMs by long polling over plain HTTP (``--count`` / 3 users, 3 each, queued at
  once), each answered with ``sendMessage``, vs the bare python-telegram-bot app (both echo).

Under callgrind a daemon is ~50x slower: keep ``--count`` in the hundreds. Needs valgrind.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from asyncio.subprocess import PIPE, Process
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO

import aiohttp

from bench.configs import HOOK_PATH, WEBHOOK_SECRET, DaemonConfig, telegram_api_base
from bench.procs import PYTHON, free_port
from bench.scenarios import slackrig, webhook, whatsapp
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import TOKEN as TG_TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.fakes.whatsapp import FakeWhatsApp

ROOT = Path(__file__).resolve().parent.parent
READY_WITHIN_S = 900.0  # the daemon imports under callgrind
LOAD_WITHIN_S = 1800.0


def _callgrind(out: Path) -> list[str]:
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]


def _count(out: Path) -> int:
    for line in out.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {out}")


async def _spawn(argv: list[str], log: IO[bytes]) -> Process:
    """``argv`` from the repository root (so ``bench`` and this checkout's ``chatgate`` import)."""
    return await asyncio.create_subprocess_exec(*argv, cwd=ROOT, stdout=log, stderr=log)


async def _stop(proc: Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
    async with asyncio.timeout(120):
        await proc.wait()


def _instrument(proc: Process, on: bool) -> None:
    subprocess.run(
        ["callgrind_control", "-i", "on" if on else "off", str(proc.pid)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def _until(check: Callable[[], Awaitable[bool]], within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        with contextlib.suppress(aiohttp.ClientError, OSError):
            if await check():
                return
        await asyncio.sleep(0.5)
    raise TimeoutError(f"{what}: not within {within_s:.0f} s")


async def _replies_counted(
    proc: Process, answered: Callable[[int], Awaitable[bool]], expected: int
) -> None:
    """Wait for ``expected`` replies in all, let the last one finish its own bookkeeping, then
    stop counting instructions."""
    await _until(lambda: answered(expected), LOAD_WITHIN_S, "replies")
    await asyncio.sleep(1.0)
    _instrument(proc, False)


async def _webhook(side: str, count: int, work: Path, out: Path) -> int:
    port = free_port()
    if side == "floor":
        argv = [PYTHON, "-m", "bench.floors.hmac_echo", "--port", str(port)]
        argv += ["--secret", WEBHOOK_SECRET, "--path", HOOK_PATH]
    else:
        config = DaemonConfig(port, webhook=True).write(work / "chatgate")
        argv = [PYTHON, "-m", "chatgate", "run", "--config", str(config), "--log-format", "json"]
    url = f"http://127.0.0.1:{port}{HOOK_PATH}"
    with (work / "subject.log").open("wb") as log:
        proc = await _spawn(_callgrind(out) + argv, log)
    try:
        async with aiohttp.ClientSession() as http:

            async def ready() -> bool:
                [(body, headers)] = webhook.requests(1, "ready")
                async with http.post(url, data=body, headers=headers) as resp:
                    return resp.status == 200

            await _until(ready, READY_WITHIN_S, f"{side} webhook")
        await webhook.hammer(url, webhook.requests(200, "warm"), webhook.CONCURRENCY)
        load = webhook.requests(count, "run")  # signed now: their timestamps are fresh
        _instrument(proc, True)
        async with asyncio.timeout(LOAD_WITHIN_S):
            done = await webhook.hammer(url, load, webhook.CONCURRENCY)
        _instrument(proc, False)
        if done.errors:
            raise RuntimeError(f"{side}: {done.errors} requests failed")
    finally:
        await _stop(proc)
    return count


async def _whatsapp(side: str, count: int, work: Path, out: Path) -> int:
    async with FakeWhatsApp() as fake:
        port = free_port()
        if side == "floor":
            argv = [*whatsapp.floor_argv(fake, "echo", None), "--port", str(port)]
        else:
            section = whatsapp.chatgate_section(fake)
            config = DaemonConfig(port, whatsapp=section).write(work / "chatgate")
            argv = [PYTHON, "-m", "chatgate", "run", "--config", str(config)]
            argv += ["--log-format", "json"]
        url = f"http://127.0.0.1:{port}{whatsapp.WEBHOOK}"
        with (work / "subject.log").open("wb") as log:
            proc = await _spawn(_callgrind(out) + argv, log)
        try:

            async def answered(n: int) -> bool:
                return len(whatsapp.sends(fake)) >= n

            async def warmed() -> bool:
                status, _ = await fake.post(url, fake.message("15550000001", text="warm-up"))
                return status == 200

            await _until(warmed, READY_WITHIN_S, f"{side} whatsapp")
            await _until(lambda: answered(1), READY_WITHIN_S, f"{side} warm-up reply")
            first = len(whatsapp.sends(fake))
            users = [str(15_550_100_000 + i) for i in range(max(1, count // 3))]
            posts = asyncio.Semaphore(16)

            async def post(text: str, user: str) -> None:
                async with posts:
                    await fake.post(url, fake.message(user, text=text))

            _instrument(proc, True)
            await asyncio.gather(*(post(f"m{k} {u}", u) for k in range(3) for u in users))
            await _replies_counted(proc, answered, first + 3 * len(users))
        finally:
            await _stop(proc)
    return 3 * len(users)


async def _slack(side: str, count: int, work: Path, out: Path) -> int:
    async with FakeSlack() as fake:
        if side == "floor":
            argv = slackrig.floor_argv(fake, "echo", None)
        else:
            section = slackrig.chatgate_section(fake)
            config = DaemonConfig(free_port(), slack=section).write(work / "chatgate")
            argv = [PYTHON, "-m", "chatgate", "run", "--config", str(config)]
            argv += ["--log-format", "json"]
        with (work / "subject.log").open("wb") as log:
            proc = await _spawn(_callgrind(out) + argv, log)
        try:

            async def answered(n: int) -> bool:
                return len(fake.calls(slackrig.POST)) >= n

            async def connected() -> bool:
                return slackrig.socket_opened(fake) is not None

            await _until(connected, READY_WITHIN_S, f"{side} slack socket")
            await fake.push_event(slackrig.dm_event(fake, 99_999, "warm-up"))
            await _until(lambda: answered(1), READY_WITHIN_S, f"{side} warm-up reply")
            first = len(fake.calls(slackrig.POST))
            users = range(100_000, 100_000 + max(1, count // 3))
            _instrument(proc, True)
            for k in range(3):
                for user in users:
                    await fake.push_event(slackrig.dm_event(fake, user, f"m{k} {user}"))
            await _replies_counted(proc, answered, first + 3 * len(users))
        finally:
            await _stop(proc)
    return 3 * len(users)


async def _telegram(side: str, count: int, work: Path, out: Path) -> int:
    async with FakeTelegram() as fake:
        if side == "floor":
            argv = [PYTHON, "-m", "bench.floors.ptb_echo", "--base-url", fake.base_url]
            argv += ["--token", TG_TOKEN, "--mode", "echo"]
        else:
            base = telegram_api_base(fake.base_url)
            config = DaemonConfig(free_port(), telegram_base=base).write(work / "chatgate")
            argv = [PYTHON, "-m", "chatgate", "run", "--config", str(config)]
            argv += ["--log-format", "json"]
        with (work / "subject.log").open("wb") as log:
            proc = await _spawn(_callgrind(out) + argv, log)
        try:

            async def answered(n: int) -> bool:
                return len(fake.calls_of("sendMessage")) >= n

            async def polling() -> bool:
                return fake.get_updates_calls > 0

            await _until(polling, READY_WITHIN_S, f"{side} getUpdates")
            fake.dm(99_999, "warm-up")
            await _until(lambda: answered(1), READY_WITHIN_S, f"{side} warm-up reply")
            first = len(fake.calls_of("sendMessage"))
            users = range(100_000, 100_000 + max(1, count // 3))
            _instrument(proc, True)
            for k in range(3):
                for user in users:
                    fake.dm(user, f"m{k} {user}")
            await _replies_counted(proc, answered, first + 3 * len(users))
        finally:
            await fake.stop()  # a held getUpdates returns at once
            await _stop(proc)
    return 3 * len(users)


PIPELINE_SESSIONS = [1]  # set by --sessions


async def _pipeline(side: str, count: int, work: Path, out: Path) -> int:
    argv = [PYTHON, "-m", "bench.scenarios.pipeline", "--side", side, "--workdir", str(work)]
    argv += ["--sessions", str(PIPELINE_SESSIONS[0]), "--turns", str(count), "--pause"]
    with (work / "subject.log").open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            *_callgrind(out), *argv, cwd=ROOT, stdin=PIPE, stdout=PIPE, stderr=log
        )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for on in (True, False):  # the side waits after its warm-up, then after its load
            async with asyncio.timeout(LOAD_WITHIN_S):
                line = await proc.stdout.readline()
            if line.strip() != b"at":
                raise RuntimeError(f"{side} pipeline: {line!r} (see {work / 'subject.log'})")
            _instrument(proc, on)
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()
        async with asyncio.timeout(LOAD_WITHIN_S):
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return count


SUBJECTS = {
    "pipeline": _pipeline,
    "webhook": _webhook,
    "whatsapp": _whatsapp,
    "slack": _slack,
    "telegram": _telegram,
}


async def measure(subject: str, side: str, count: int, scratch: Path) -> float:
    """Instructions per message of ``side`` (chatgate or floor) answering ``subject``'s load."""
    work = scratch / f"{subject}-{side}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    out = work / "callgrind.out"
    messages = await SUBJECTS[subject](side, count, work, out)
    return _count(out) / messages


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__)
    parser.add_argument("subject", choices=sorted(SUBJECTS))
    parser.add_argument("--count", type=int, default=300, help="messages (default 300)")
    parser.add_argument("--side", choices=["chatgate", "floor", "both"], default="both")
    parser.add_argument("--sessions", type=int, default=1, help="pipeline only (default 1)")
    parser.add_argument("--keep", type=Path, help="keep the callgrind files under this directory")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    PIPELINE_SESSIONS[0] = args.sessions
    sides = ["chatgate", "floor"] if args.side == "both" else [args.side]
    with tempfile.TemporaryDirectory(prefix="chatgate-instr-") as scratch:
        where = args.keep or Path(scratch)
        per = {side: asyncio.run(measure(args.subject, side, args.count, where)) for side in sides}
    for side, value in per.items():
        print(f"{args.subject} {side}: {value / 1e3:,.0f} k instructions per message")
    if len(per) == 2:
        print(f"chatgate / floor: {per['chatgate'] / per['floor']:.2f}")


if __name__ == "__main__":
    main()
