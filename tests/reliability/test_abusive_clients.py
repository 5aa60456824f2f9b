"""Slowloris and a webhook flood against a real daemon: /healthz and honest clients are served.

Every load loop is bounded in count and time and targets 127.0.0.1 only. The latencies and the
peak RSS are printed (run with -s); the budget (/healthz within 1 s) is a figure for the report,
asserted only loosely here because the machine is shared.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import aiohttp
import pytest

from tests.daemon import Daemon, post_signed_job
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.reliability.killloop import SECRET, config

SLOW_CONNECTIONS = 300
FLOOD = 200
BIG = 20  # concurrent bodies just under the 1 MiB limit


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


async def slow_client(port: int, stop: asyncio.Event) -> None:
    """Opens a connection and trickles a header line every half second, never finishing."""
    with contextlib.suppress(OSError):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(b"POST /hooks/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            n = 0
            while not stop.is_set() and not reader.at_eof():
                writer.write(f"X-Slow-{n}: a\r\n".encode())
                await writer.drain()
                n += 1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
        finally:
            writer.close()


@pytest.mark.slow
async def test_slowloris_and_flood_leave_healthz_and_honest_clients_served(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    daemon = await Daemon(config(tmp_path, fake_tg, fake_llm)).start(timeout=60)
    assert daemon.proc is not None and daemon.port is not None
    stop = asyncio.Event()
    slow = [asyncio.create_task(slow_client(daemon.port, stop)) for _ in range(SLOW_CONNECTIONS)]
    latencies: list[float] = []
    try:
        await asyncio.sleep(1.0)  # the slow connections are open and trickling
        flood = [
            post_signed_job(daemon.base, "wrong-secret", f"flood {i}", delivery=f"f{i}")
            for i in range(FLOOD)
        ]
        big_text = "x" * (1024 * 1024 - 200)
        flood += [
            post_signed_job(daemon.base, "wrong-secret", big_text, delivery=f"big{i}")
            for i in range(BIG)
        ]
        flooding = asyncio.gather(*flood, return_exceptions=True)
        timeout = aiohttp.ClientTimeout(total=5)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            for _ in range(20):
                started = time.monotonic()
                async with session.get(daemon.base + "/healthz") as resp:
                    assert resp.status == 200
                latencies.append(time.monotonic() - started)
                await asyncio.sleep(0.1)
        statuses = [r[0] for r in await flooding if isinstance(r, tuple)]
        status, _ = await post_signed_job(daemon.base, SECRET, "honest", delivery="honest-1")
        assert status == 202
        rss = peak_rss_kib(daemon.proc.pid)
    finally:
        stop.set()
        await asyncio.gather(*slow, return_exceptions=True)
        assert await daemon.terminate() == 0
    ordered = sorted(latencies)
    p50, p99 = ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.99)]
    print(
        f"slowloris {SLOW_CONNECTIONS} connections + {FLOOD} forged posts + {BIG} ~1 MiB bodies "
        f"({statuses.count(401)} answered 401): /healthz p50 {p50 * 1000:.0f} ms, "
        f"p99 {p99 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms; peak RSS {rss / 1024:.0f} MiB"
    )
    assert all(s in (401, 429, 503) for s in statuses)  # a forged flood never reaches a turn
    assert "echo: flood" not in str([c.params for c in fake_tg.calls_of("sendMessage")])
