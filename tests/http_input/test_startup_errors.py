"""`chatgate run` whose Redis store is not there: one clear line, exit 75, no traceback."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.daemon import run_cli
from tests.harness import write_config

CANARY = "pw-canary-Redis-8c1f"


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_redis_down_at_start_exits_75_with_one_line(tmp_path: Path) -> None:
    port = unused_port()
    config = write_config(
        tmp_path,
        f"""  store: {{backend: redis, url: "redis://:{CANARY}@127.0.0.1:{port}/0"}}
agents:
  default: {{backend: echo}}
""",
    )
    code, out, err = await run_cli("run", "--config", str(config))
    logs = out + err
    assert code == 75, logs
    assert "Traceback" not in logs
    assert f"gateway.store.url: cannot reach Redis at 127.0.0.1:{port}" in logs
    assert CANARY not in logs
