"""Daemon RSS under authenticated gzip bombs (`python -m tests.http_input.bomb_rss [N] [MiB]`).

Starts the real daemon, sends N compressed bodies that would inflate to MiB each, with a valid
API token and a valid web chat session, five at a time, and prints the RSS at idle, the peak
while they arrive and after. Not run by `make test` (it takes a minute and a few hundred MB of
client-side compression work)."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import zlib
from pathlib import Path

import aiohttp

from tests.daemon import Daemon
from tests.harness import write_config

API_TOKEN = "Zq8vN2kLp4Rt7Wx1Yc5Bm9Hd3Gf6Js0A"


def bomb(mib: int) -> bytes:
    """A gzip body inflating to ``mib`` MiB of zeros (compressed a MiB at a time)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    return b"".join(packer.compress(block) for _ in range(mib)) + packer.flush()


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def main(count: int, mib: int) -> None:
    body = bomb(mib)
    with tempfile.TemporaryDirectory() as tmp:
        config = write_config(
            Path(tmp),
            f"""  api_token: {API_TOKEN}
agents:
  default: {{backend: echo}}
""",
        )
        daemon = await Daemon(config).start()
        assert daemon.proc is not None
        pid = daemon.proc.pid
        try:
            await asyncio.sleep(1)
            idle = rss_mib(pid)
            peak = idle
            statuses: dict[int, int] = {}
            headers = {
                "Authorization": f"Bearer {API_TOKEN}",
                "Content-Type": "application/json",
                "Content-Encoding": "gzip",
            }
            gate = asyncio.Semaphore(5)

            async def one(session: aiohttp.ClientSession) -> None:
                nonlocal peak
                async with gate:
                    try:
                        async with session.post(
                            daemon.base + "/api/sessions/reset", data=body, headers=headers
                        ) as r:
                            statuses[r.status] = statuses.get(r.status, 0) + 1
                    except aiohttp.ClientError:
                        statuses[0] = statuses.get(0, 0) + 1  # closed before the body was sent
                    peak = max(peak, rss_mib(pid))

            async with aiohttp.ClientSession() as session:
                await asyncio.gather(*(one(session) for _ in range(count)))
                for _ in range(50):
                    async with session.get(daemon.base + "/api/status", headers=headers) as r:
                        await r.read()
            await asyncio.sleep(2)
            after = rss_mib(pid)
        finally:
            await daemon.terminate()
    print(
        f"{count} gzip bombs of {mib} MiB ({len(body) // 1024} KiB sent each): answers {statuses}; "
        f"RSS idle {idle:.0f} MiB, peak {peak:.0f} MiB (+{peak - idle:.0f}), "
        f"after {after:.0f} MiB (+{after - idle:.0f})"
    )


if __name__ == "__main__":
    asyncio.run(
        main(
            int(sys.argv[1]) if len(sys.argv) > 1 else 30,
            int(sys.argv[2]) if len(sys.argv) > 2 else 512,
        )
    )
