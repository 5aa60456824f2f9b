"""Gateway + fake Discord + fake model wiring for the Discord end-to-end tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chatgate.gateway.app import Gateway
from chatgate.state.records import JournalEntry
from tests.channels.telegram.helpers_b import settled as settled_entry
from tests.fakes.discord_lite import FakeDiscord
from tests.fakes.llm import FakeLLM
from tests.harness import channel_status, eventually_channel_state, fake_model_config

DM_USER = 3000
DM_CHANNEL = 7_000_000 + DM_USER


def discord_config(
    tmp_path: Path,
    discord: FakeDiscord,
    llm: FakeLLM,
    *,
    channel: str = "    dm_policy: open\n",
    gateway: str = "",
    extra: str = "",
    agents: str = "",
) -> Path:
    return fake_model_config(
        tmp_path,
        llm,
        f"""  discord:
{discord.channel_yaml()}{channel}{extra}""",
        head=gateway,
        agents=agents,
        api_key="sk-discord-test",
    )


def section(gw: Gateway, name: str = "discord") -> dict[str, Any]:
    return channel_status(gw, name)


async def eventually_state(
    gw: Gateway, state: str, name: str = "discord", timeout: float = 30
) -> dict[str, Any]:
    return await eventually_channel_state(gw, name, state, timeout)


def python_agent(tmp_path: Path, monkeypatch: Any, module: str, source: str) -> str:
    """gateway.yaml lines for an agent `scripted` backed by `module:agent` (written to tmp_path)."""
    import textwrap

    code_dir = tmp_path / "agents"
    code_dir.mkdir(exist_ok=True)
    (code_dir / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.syspath_prepend(str(code_dir))
    return f"  scripted:\n    backend: python\n    function: {module}:agent\n"


async def settled(gw: Gateway, key: str, timeout: float = 30.0) -> JournalEntry:
    """The journal entry of `key` once final (the first turn of a run pays the litellm import)."""
    return await settled_entry(gw, key, timeout)
