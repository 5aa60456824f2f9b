"""Start real Gateway instances in-process on port 0 with a tmp state dir."""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp

from chatgate.channels.registry import ChannelRegistry
from chatgate.config.loader import load_config
from chatgate.gateway.app import Gateway
from chatgate.gateway.clock import Clock
from tests.fakes.memory_channel import MemoryChannel

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


def registry() -> ChannelRegistry:
    reg = ChannelRegistry()
    reg.register("memory", MemoryChannel)
    return reg


def load(path: Path, env: Mapping[str, str] | None = None) -> Any:
    return load_config(path, env=env or {}, catalog=registry())


@contextlib.asynccontextmanager
async def running(
    path: Path, *, env: Mapping[str, str] | None = None, clock: Clock | None = None, **options: Any
) -> AsyncIterator[Gateway]:
    gateway = Gateway(load(path, env), registry=registry(), env=env or {}, clock=clock, **options)
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


def url(gateway: Gateway, path: str) -> str:
    return f"http://127.0.0.1:{gateway.port}{path}"


def memory(gateway: Gateway) -> MemoryChannel:
    adapter = gateway.channels.adapters["memory"]
    assert isinstance(adapter, MemoryChannel)
    return adapter


@contextlib.asynccontextmanager
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session
