"""A running gateway imports only what its config uses: no SDK of an unconfigured channel, no
Redis client on SQLite, no media or MCP library before a message needs one; and it builds
validators only for the config models it validates."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.daemon import cli_env

PROBE = """
import asyncio, gc, json, sys
from pathlib import Path
from pydantic import BaseModel
from chatgate.channels.registry import ChannelRegistry
from chatgate.config.loader import load_config
from chatgate.gateway.builder import GatewayBuilder

async def main() -> None:
    gateway = GatewayBuilder(load_config(Path(sys.argv[1]), env={}, catalog=ChannelRegistry())).build()
    await gateway.start()
    try:
        gc.unfreeze()  # the started gateway froze its start-up objects out of gc's lists
        built = [
            f"{c.__module__}.{c.__qualname__}"
            for c in gc.get_objects()
            if isinstance(c, type) and issubclass(c, BaseModel)
            and c.__module__.startswith("chatgate.") and c.__dict__.get("__pydantic_complete__")
        ]
        modules = sorted({name.split(".")[0] for name in sys.modules})
        print(json.dumps({"modules": modules, "built": sorted(built)}))
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


async def _probe(tmp_path: Path) -> dict[str, list[str]]:
    """What a started webhook-only gateway has imported and which config models it built."""
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
    seen: dict[str, list[str]] = json.loads(out.decode().strip().splitlines()[-1])
    assert "chatgate" in seen["modules"] and "aiohttp" in seen["modules"]  # a running gateway
    return seen


async def test_a_webhook_gateway_on_sqlite_loads_no_sdk_it_does_not_use(tmp_path: Path) -> None:
    loaded = set((await _probe(tmp_path))["modules"])
    assert sorted(loaded.intersection(NOT_AT_START)) == []


async def test_config_models_of_unconfigured_sections_build_no_validator(tmp_path: Path) -> None:
    """Every channel's config model is imported (the loader knows every platform), but a
    validator is built only when a section is validated: its own, or nested in one that is."""
    built = (await _probe(tmp_path))["built"]
    assert "chatgate.channels.webhook.config.WebhookChannelConfig" in built
    unconfigured = ("discord", "email", "matrix", "slack", "teams", "telegram", "whatsapp")
    assert [m for m in built if m.split(".")[2] in unconfigured] == []
