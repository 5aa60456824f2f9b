"""Scenario: a 10 MB file in a reply. chatgate (agent → stored file → delivery → Telegram upload)
vs a bare python-telegram-bot ``send_document`` of the same bytes.

Both sides run in the bench process against one in-process fake Bot API, which parses every
multipart upload for both: its share of the CPU is the same on each side, so the ratio
understates chatgate's overhead slightly. chatgate's side is a whole turn (a python agent returns
the file; it is written to the outgoing store, read back, uploaded and removed); the floor is the
upload alone. RSS is the process's resident size after the uploads minus before.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

from bench.runner import Context, Outcome
from bench.stats import Spec, Table
from tests.channels.telegram.support import api_base, telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.harness import running

SIZE = 10 * 1024 * 1024
CPU = Spec("upload_cpu_ms", "CPU per 10 MB file uploaded", "ms", "lower")
RSS = Spec("upload_rss_mb", "RSS growth over the uploads", "MB", "lower")
AGENT = f"""
from chatgate.model.outbound import File, OutboundMessage

DATA = bytes(range(256)) * ({SIZE} // 256)

def agent(turn):
    return OutboundMessage((File("big.bin", "application/octet-stream", data=DATA),))
"""


def _rss_mb() -> float:
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _forget_bytes(tg: FakeTelegram) -> None:
    """The fake records each call's parameters: drop the uploaded bytes so they do not count."""
    for call in tg.calls:
        call.params.pop("document", None)


async def _chatgate(
    ctx: Context, tg: FakeTelegram, llm: FakeLLM, n: int, rep: int
) -> tuple[float, float]:
    work = ctx.scratch(f"uploads-{rep}")  # a fresh state dir: the fake restarts message ids
    (work / "bench_upload_agent.py").write_text(AGENT)
    sys.path.insert(0, str(work))
    agents = "  scripted:\n    backend: python\n    function: bench_upload_agent:agent\n"
    channel = "    dm_policy: open\n    agent: scripted\n"
    config = telegram_config(work, tg, llm, channel=channel, agent=agents)
    async with running(config):
        base = len(tg.calls_of("sendDocument"))  # the floor may have gone first
        tg.dm(1, "warm-up")
        await tg.wait_for("sendDocument", count=base + 1, timeout=60)
        rss, cpu = _rss_mb(), time.process_time()
        for i in range(n):
            tg.dm(100 + i, f"file {i}")  # one user each: per-sender rate limits stay out of it
            await tg.wait_for("sendDocument", count=base + i + 2, timeout=60)
            _forget_bytes(tg)
        return (time.process_time() - cpu) / n * 1000, _rss_mb() - rss


async def _floor(tg: FakeTelegram, n: int) -> tuple[float, float]:
    from telegram import Bot, InputFile

    data = bytes(range(256)) * (SIZE // 256)
    async with Bot(TOKEN, base_url=api_base(tg) + "/bot") as bot:
        await bot.send_document(1, document=InputFile(data, filename="big.bin"))
        rss, cpu = _rss_mb(), time.process_time()
        for _ in range(n):
            await bot.send_document(1, document=InputFile(data, filename="big.bin"))
            _forget_bytes(tg)
        return (time.process_time() - cpu) / n * 1000, _rss_mb() - rss


async def scenario(ctx: Context) -> Outcome:
    n = ctx.pick(10, 3)
    table = Table()
    for rep in range(ctx.reps):
        async with FakeTelegram() as tg, FakeLLM() as llm:
            if rep % 2:
                bare = await _floor(tg, n)
                ours = await _chatgate(ctx, tg, llm, n, rep)
            else:
                ours = await _chatgate(ctx, tg, llm, n, rep)
                bare = await _floor(tg, n)
        table.add(CPU, ours[0], bare[0])
        table.add(RSS, ours[1], bare[1])
    params = {
        "uploads": n,
        "size_bytes": SIZE,
        "chatgate": "whole turn: python agent → outgoing store → delivery → PTB sendDocument",
        "floor": "bare PTB Bot.send_document of the same bytes, same fake Bot API",
    }
    return Outcome(table, params)
