"""Scenario: a burst of media messages. 200 users each send a 5 MB photo or a 1-minute voice
note at once (alternating), through the real daemon vs a bare PTB + litellm floor.

chatgate's side is the daemon with its media step on (vision on, transcription at the fake
model's whisper endpoint, default limits: 8 downloads at once); the floor is
``bench.floors.ptb_media`` (download into memory, one transcription or vision call, one reply).
Each polls its own FakeTelegram, which serves every user's file (one shared bytes object, so the
bench process does not grow per file). Measured per burst:

* peak RSS above idle: the process's VmHWM (reset through ``/proc/<pid>/clear_refs`` just before
  the burst) minus its VmRSS just before; the goal for chatgate is 150 MB (files go to disk);
* CPU per media message: the process's user+system CPU from enqueue until it went quiet;
* lost: users with no reply within the window.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import time
from pathlib import Path
from typing import Any

import yaml

from bench.configs import BENCH_API_KEY, BENCH_MODEL, DaemonConfig, telegram_api_base
from bench.procs import (
    PYTHON,
    FakeLLMProc,
    Proc,
    cpu_seconds,
    daemon,
    free_port,
    started,
    wait_ready,
    wait_until,
)
from bench.runner import Context, Outcome
from bench.scenarios.tgrig import Subject, quiesce
from bench.stats import Spec, Table
from tests.fakes.telegram import TOKEN, FakeTelegram

USERS = 200
VOICE_BYTES = 240 * 1024  # one minute of Opus at 32 kbit/s
VOICE_S = 60
RSS_GOAL_MB = 150.0
WINDOW_PER_MSG_S = 0.5
QUIET_S = 1.0
MB = 1024 * 1024

SPECS = {
    "rss": Spec("media_peak_rss_mb", "peak RSS above idle", "MB", "lower", RSS_GOAL_MB),
    "cold": Spec(
        "media_first_peak_rss_mb", "peak RSS above idle, first burst", "MB", "lower", RSS_GOAL_MB
    ),
    "cpu": Spec("media_cpu_ms_per_msg", "CPU per media message", "ms", "lower"),
    "wall": Spec("media_wall_s", "burst wall time", "s", "lower"),
    "lost": Spec("media_lost", "media messages with no reply", "", "lower", 0.0),
}


def photo_bytes() -> bytes:
    """A 12-megapixel JPEG of about 5 MB: a gradient under fine grain, so it compresses like a
    phone photo (about 0.2 MB once scaled to the 1568 px a model is sent) and decodes for real."""
    from PIL import Image

    width, height = 4000, 3000
    base = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    grain = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    out = io.BytesIO()
    Image.blend(base, grain, 0.21).save(out, "JPEG", quality=90)
    return out.getvalue()


def voice_bytes() -> bytes:
    return b"OggS\x00\x02" + os.urandom(VOICE_BYTES - 6)


class Sender:
    """Registers each user's file at a fake and enqueues the message carrying it."""

    def __init__(self, photo: bytes, voice: bytes) -> None:
        self.photo, self.voice = photo, voice

    def send(self, fake: FakeTelegram, user: int) -> None:
        if user % 2:
            fid = f"voice{user}"
            fake.files.add(fid, self.voice, ext="oga")
            voice = {"file_id": fid, "file_unique_id": f"u{fid}", "duration": VOICE_S}
            voice |= {"mime_type": "audio/ogg", "file_size": len(self.voice)}
            fake.media_message(user, "voice", voice)
            return
        fid = f"photo{user}"
        fake.files.add(fid, self.photo, ext="jpg")
        thumb = {"file_id": f"t{fid}", "file_unique_id": f"ut{fid}", "width": 90, "height": 68}
        full = {"file_id": fid, "file_unique_id": f"u{fid}", "width": 4000, "height": 3000}
        fake.media_message(user, "photo", [thumb, full | {"file_size": len(self.photo)}])


def _status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = int(rest.split()[0]) * 1024
    return out


def _reset_peak(pid: int) -> bool:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0); False where that is not allowed."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


def _replied(fake: FakeTelegram, start: int, users: set[int]) -> set[int]:
    return {
        int(c.params.get("chat_id", 0))
        for c in fake.calls[start:]
        if c.method.lower() == "sendmessage" and int(c.params.get("chat_id", 0)) in users
    }


async def burst(fake: FakeTelegram, proc: Proc, sender: Sender, users: range) -> dict[str, float]:
    """All messages at once; wait (bounded) for one reply per user; peak RSS, CPU, lost."""
    start, wanted = len(fake.calls), set(users)
    idle = _status(proc.pid)["VmRSS"]
    hwm_ok = _reset_peak(proc.pid)
    peak, cpu_before = idle, cpu_seconds(proc.pid)
    first = time.monotonic()
    for user in users:
        sender.send(fake, user)
    deadline = first + max(30.0, WINDOW_PER_MSG_S * len(users))
    done: set[int] = set()
    while time.monotonic() < deadline:
        proc.check_alive()
        peak = max(peak, _status(proc.pid)["VmRSS"])
        done = _replied(fake, start, wanted)
        if len(done) == len(wanted):
            break
        await asyncio.sleep(0.02)
    wall = time.monotonic() - first
    await quiesce(Subject(proc.name, fake, proc), QUIET_S)
    status = _status(proc.pid)
    if hwm_ok:
        peak = max(peak, status["VmHWM"])
    lost = len(wanted - _replied(fake, start, wanted))
    return {
        "rss": (peak - idle) / MB,
        "cpu": (cpu_seconds(proc.pid) - cpu_before) * 1000 / len(users),
        "wall": wall,
        "lost": float(lost),
    }


def _media_config(port: int, llm: str, fake: FakeTelegram, directory: Path) -> Path:
    path = DaemonConfig(port, llm_base=llm, telegram_base=telegram_api_base(fake.base_url)).write(
        directory
    )
    doc: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["agents"]["default"]["media"] = {"vision": True}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


async def _warm(fake: FakeTelegram, proc: Proc, sender: Sender, users: range) -> None:
    """A photo and a voice note answered end to end: imports done, connections open."""
    start = len(fake.calls)
    for user in users:
        sender.send(fake, user)

    def ready() -> bool:
        return len(_replied(fake, start, set(users))) == len(users)

    await wait_until(ready, 120.0, f"{proc.name} media warm-up", procs=[proc], interval=0.05)


async def scenario(ctx: Context) -> Outcome:
    users = ctx.pick(USERS, 20)
    workdir = ctx.scratch("media")
    sender = Sender(await asyncio.to_thread(photo_bytes), voice_bytes())
    table = Table()
    bursts: dict[str, list[dict[str, float]]] = {"chatgate": [], "floor": []}
    async with contextlib.AsyncExitStack() as stack:
        llm = await stack.enter_async_context(started(FakeLLMProc(workdir / "fake-llm.log")))
        gate_fake = await stack.enter_async_context(FakeTelegram())
        floor_fake = await stack.enter_async_context(FakeTelegram())
        port = free_port()
        gate = daemon(_media_config(port, llm.base_url, gate_fake, workdir / "chatgate"))
        argv = [PYTHON, "-m", "bench.floors.ptb_media", "--base-url", floor_fake.base_url]
        argv += ["--token", TOKEN, "--llm-base", llm.base_url, "--model", BENCH_MODEL]
        argv += ["--api-key", BENCH_API_KEY]
        floor = Proc("ptb-media-floor", argv, workdir / "floor.log")
        for proc in (gate, floor):
            await stack.enter_async_context(started(proc))
        await wait_ready(ctx.http, gate, port)
        next_user = 10_000
        for fake, proc in ((gate_fake, gate), (floor_fake, floor)):
            await _warm(fake, proc, sender, range(next_user, next_user + 2))
            next_user += 2
        await asyncio.sleep(ctx.settle(1.0))
        for _ in range(ctx.reps):
            results = []
            for name, fake, proc in (("chatgate", gate_fake, gate), ("floor", floor_fake, floor)):
                result = await burst(fake, proc, sender, range(next_user, next_user + users))
                next_user += users
                bursts[name].append(result)
                results.append(result)
            for key, spec in SPECS.items():
                if key != "cold":
                    table.add(spec, results[0][key], results[1][key])
        # the heap grows once, on the first burst after start; later bursts reuse it
        table.add(SPECS["cold"], bursts["chatgate"][0]["rss"], bursts["floor"][0]["rss"])
    params = {
        "users": users,
        "mix": "even users a 5 MB JPEG photo, odd users a 60 s voice note (OGG, 240 KB)",
        "photo_bytes": len(sender.photo),
        "voice_bytes": len(sender.voice),
        "chatgate": "daemon, media on (vision, whisper-1 at the fake), default limits",
        "floor": "bare PTB Application + litellm: download to memory, one call, one reply",
        "rss_goal_mb": RSS_GOAL_MB,
    }
    return Outcome(table, params, {"bursts": bursts})
