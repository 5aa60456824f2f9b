"""A running gateway imports only what its config uses: no SDK of an unconfigured channel, no
Redis client on SQLite, no media or MCP library before a message needs one, no litellm when every
model takes the openai route; and it builds validators only for the config models it validates."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from tests.daemon import ROOT, cli_env
from tests.fakes.llm import FakeLLM

PROBE = """
import asyncio, gc, json, os, sys
from pathlib import Path
import aiohttp
from pydantic import BaseModel
from chatgate.channels.registry import ChannelRegistry
from chatgate.config.loader import load_config
from chatgate.gateway.builder import GatewayBuilder

async def turn(port: int, text: str) -> dict:
    # a webhook turn, then the metrics
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/hooks/t", json={"text": text}) as resp:
            reply = (await resp.json())["reply"]
        async with http.get(f"{base}/metrics") as resp:
            metrics = await resp.text()
    return {"reply": reply, "metrics": metrics}

async def main() -> None:
    env = json.loads(sys.argv[2])
    loaded = load_config(Path(sys.argv[1]), env=env, catalog=ChannelRegistry())
    gateway = GatewayBuilder(loaded).build()
    await gateway.start()
    try:
        idle = float(os.environ.get("PROBE_IDLE_S", "0"))  # idle so long, or until litellm is in
        while idle > 0 and "litellm" not in sys.modules:
            await asyncio.sleep(0.1)
            idle -= 0.1
        answered = await turn(gateway.port, sys.argv[3]) if len(sys.argv) > 3 else {}
        gc.unfreeze()  # the started gateway froze its start-up objects out of gc's lists
        built = [
            f"{c.__module__}.{c.__qualname__}"
            for c in gc.get_objects()
            if isinstance(c, type) and issubclass(c, BaseModel)
            and c.__module__.startswith("chatgate.") and c.__dict__.get("__pydantic_complete__")
        ]
        modules = sorted({name.split(".")[0] for name in sys.modules.copy()})  # a thread imports
        print(json.dumps({"modules": modules, "built": sorted(built), **answered}))
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


async def _probe(
    tmp_path: Path,
    text: str | None = None,
    env: dict[str, str] | None = None,
    *turn: str,
    idle_s: float = 0.0,
) -> dict[str, Any]:
    """What a started gateway has imported and which config models it built, on config ``text``
    (else ``CONFIG``); with ``turn``, also a webhook turn's reply and the metrics after it;
    ``idle_s``: idle that long first, or until litellm is imported."""
    config = tmp_path / "gateway.yaml"
    text = CONFIG.format(state=tmp_path / "state") if text is None else text
    config.write_text(text, encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        PROBE,
        str(config),
        json.dumps(env or {}),
        *turn,
        env={**cli_env(), "PROBE_IDLE_S": str(idle_s)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    seen: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
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


OPENAI_ROUTE = CONFIG.replace(
    "{{backend: echo}}",
    "{{backend: litellm, model: openai/gpt-4o-mini, api_base: {base}, api_key: sk-test}}",
)


async def test_the_shipped_config_runs_without_litellm(tmp_path: Path) -> None:
    """gateway.yaml's model is an openai/ one: the warmed daemon has the openai SDK, not litellm
    (its import is ~200 MB and seconds of CPU)."""
    shipped = (ROOT / "gateway.yaml").read_text(encoding="utf-8")
    env = {"CHATGATE_STATE_DIR": str(tmp_path / "state"), "CHATGATE_PORT": "0"}
    loaded = set((await _probe(tmp_path, shipped, env))["modules"])
    assert "openai" in loaded and "litellm" not in loaded


async def test_a_turn_on_the_openai_route_is_priced_without_litellm(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """The call's cost comes from litellm's bundled cost map file, read without importing it."""
    config = OPENAI_ROUTE.format(state=tmp_path / "state", base=fake_llm.base_url)
    seen = await _probe(tmp_path, config, None, "ping")
    assert seen["reply"] == "echo: ping"
    assert "litellm" not in seen["modules"]
    [cost] = [
        line for line in seen["metrics"].splitlines() if line.startswith("chatgate_cost_usd_total")
    ]
    assert 'model="openai/gpt-4o-mini"' in cost and float(cost.rsplit(" ", 1)[1]) > 0


BUDGETED = (
    OPENAI_ROUTE
    + """budgets:
  - {{name: daily, scope: user, limit_usd: 1}}
"""
)


async def test_a_cost_budget_imports_litellm_while_idle_not_in_the_first_turn(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """A cost budget estimates an agent's first calls with litellm's token counter: the idle
    daemon imports it in the background, so the first turn does not wait seconds for it."""
    config = BUDGETED.format(state=tmp_path / "state", base=fake_llm.base_url)
    seen = await _probe(tmp_path, config, None, idle_s=60.0)
    assert "litellm" in seen["modules"]
