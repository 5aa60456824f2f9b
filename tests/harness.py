"""Start real Gateway instances in-process on port 0 with a tmp state dir."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import textwrap
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from chatgate.channels.registry import ChannelRegistry
from chatgate.clock import Clock
from chatgate.config.loader import LoadedConfig, load_config
from chatgate.gateway.app import Gateway
from chatgate.gateway.builder import GatewayBuilder
from chatgate.gateway.http.local_api import read_endpoint
from chatgate.gateway.process.memory_monitor import MemorySource
from chatgate.state.sqlite import DB_FILE
from tests.fakes.llm import FakeLLM
from tests.fakes.memory_channel import MemoryChannel
from tests.support.waiting import eventually

BASE = """
config_version: 1
gateway:
  http: {{host: 127.0.0.1, port: 0}}
  state_dir: {state}
  drain_timeout_s: 5
"""


def write_config(tmp_path: Path, body: str, *, name: str = "gateway.yaml") -> Path:
    state = tmp_path / "state"
    text = BASE.format(state=state) + textwrap.dedent(body)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True)
class OverHttp:
    """The fake model behind chatgate's `http` agent backend instead of litellm: for daemon tests
    about crashes, restarts and channels rather than the model, each start then skips litellm's
    import (about 5 of a daemon start's 6 CPU seconds). Same script, faults and `requests`."""

    llm: FakeLLM


def over_http(llm: FakeLLM) -> OverHttp:
    return OverHttp(llm)


def fake_agent(llm: FakeLLM | OverHttp, api_key: str, timeout_s: float) -> str:
    """The `agents:` section up to its agent `default` on the fake model `llm`; a config goes on
    with more lines of that agent (indented by four) or another section."""
    if isinstance(llm, OverHttp):
        return (
            f"agents:\n  default:\n    backend: http\n    url: {llm.llm.agent_url}\n"
            f"    api_key: {api_key}\n    timeout_s: {timeout_s}"
        )
    return (
        "agents:\n  default:\n    backend: litellm\n    model: openai/fake-model\n"
        f"    api_base: {llm.base_url}\n    api_key: {api_key}\n    timeout_s: {timeout_s}"
    )


def registry() -> ChannelRegistry:
    reg = ChannelRegistry()
    reg.register("memory", MemoryChannel)
    return reg


def load(path: Path, env: Mapping[str, str] | None = None) -> LoadedConfig:
    return load_config(path, env=env or {}, catalog=registry())


def build(
    path: Path,
    *,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
    memory_source: MemorySource | None = None,
) -> Gateway:
    builder = GatewayBuilder(load(path, env)).registry(registry()).env(env or {})
    if clock is not None:
        builder.clock(clock)
    if memory_source is not None:
        builder.memory_source(memory_source)
    return builder.build()


@contextlib.asynccontextmanager
async def running(
    path: Path,
    *,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
    memory_source: MemorySource | None = None,
) -> AsyncIterator[Gateway]:
    gateway = build(path, env=env, clock=clock, memory_source=memory_source)
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


def url(gateway: Gateway, path: str) -> str:
    return f"http://127.0.0.1:{gateway.port}{path}"


def operator(gateway: Gateway) -> dict[str, str]:
    """The Authorization header the local CLI would send (the token in the state dir)."""
    endpoint = read_endpoint(gateway.rt.state_dir)
    assert endpoint is not None, "the daemon did not publish its local API endpoint"
    return {"Authorization": f"Bearer {endpoint.token}"}


async def sql(gateway: Gateway, statement: str) -> None:
    """Run one statement on the state database from a second connection (fault injection)."""

    def run() -> None:
        conn = sqlite3.connect(gateway.rt.state_dir / DB_FILE, timeout=10)
        try:
            conn.execute(statement)
            conn.commit()
        finally:
            conn.close()

    await asyncio.to_thread(run)


def memory(gateway: Gateway) -> MemoryChannel:
    adapter = gateway.channels.adapters["memory"]
    assert isinstance(adapter, MemoryChannel)
    return adapter


@contextlib.asynccontextmanager
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def fake_model_config(
    tmp_path: Path,
    llm: FakeLLM | OverHttp,
    channels: str,
    *,
    head: str = "",
    agents: str = "",
    api_key: str = "sk-test",
) -> Path:
    """gateway.yaml for a channel's end-to-end tests: `head` (top-level sections), the agent
    `default` on the fake model plus `agents`, and `channels` (the YAML under `channels:`)."""
    return write_config(
        tmp_path,
        f"""{head}
{fake_agent(llm, api_key, 10)}
{agents}channels:
{channels}""",
    )


def channel_status(gw: Gateway, name: str) -> dict[str, Any]:
    """One channel's entry of the status snapshot (state, error, hint, adapter detail)."""
    return {c["name"]: c for c in gw.channels.snapshot()}[name]


async def eventually_channel_state(
    gw: Gateway, name: str, state: str, timeout: float = 30
) -> dict[str, Any]:
    """The channel's status once it reaches ``state``; AssertionError after ``timeout``."""

    def reached() -> dict[str, Any] | None:
        found = channel_status(gw, name)
        return found if found["state"] == state else None

    try:
        return await eventually(reached, timeout, f"{name} to reach {state}")
    except AssertionError:
        raise AssertionError(f"{name} never reached {state}: {channel_status(gw, name)}") from None
