"""A running gateway imports only what its config uses: no SDK of an unconfigured channel, no
Redis client on SQLite, no media or MCP library before a message needs one."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.daemon import cli_env

PROBE = """
import asyncio, json, sys
from pathlib import Path
from chatgate.channels.registry import ChannelRegistry
from chatgate.config.loader import load_config
from chatgate.gateway.builder import GatewayBuilder

async def main() -> None:
    gateway = GatewayBuilder(load_config(Path(sys.argv[1]), env={}, catalog=ChannelRegistry())).build()
    await gateway.start()
    try:
        print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
    finally:
        await gateway.stop()

asyncio.run(main())
"""

CONFIG = """
config_version: 1
gateway:
  http: {{host: 127.0.0.1, port: 0}}
  state_dir: {state}
agents:
  default: {{backend: echo}}
channels:
  webhook:
    routes:
      hook: {{path: /hooks/t, signature: none}}
"""

# Libraries a webhook-only gateway on SQLite has no use for until a message or a config needs them:
# SDKs, media and MCP; Babel (a locale tag, a counted or worded text), croniter and dateutil (a
# schedule), filetype (a file), tarfile (an export), difflib (a config mistake or edit).
NOT_AT_START = (
    *("redis", "discord", "slack_sdk", "slack_bolt", "nio", "PIL", "pypdf", "mcp"),
    *("babel", "croniter", "dateutil", "filetype", "tarfile", "difflib"),
)


async def test_a_webhook_gateway_on_sqlite_loads_no_sdk_it_does_not_use(tmp_path: Path) -> None:
    config = tmp_path / "gateway.yaml"
    config.write_text(CONFIG.format(state=tmp_path / "state"), encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        PROBE,
        str(config),
        env=cli_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    loaded = set(json.loads(out.decode().strip().splitlines()[-1]))
    assert "chatgate" in loaded and "aiohttp" in loaded  # the probe saw a running gateway
    assert sorted(loaded.intersection(NOT_AT_START)) == []
