"""Paused chats on SQLite: kept across a restart of the daemon, and the dashboard's data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatgate.cli.main import main
from chatgate.clock import SystemClock
from chatgate.gateway.app import Gateway
from chatgate.policies.takeover import Pause
from chatgate.state.factory import build_state
from tests.harness import http, load, memory, operator, running, write_config

CONFIG = """
agents:
  default: {backend: echo}
channels:
  memory: {dm_policy: open}
"""


async def call(gw: Gateway, method: str, path: str, body: Any = None) -> dict[str, Any]:
    async with http() as session:
        address = f"http://127.0.0.1:{gw.port}{path}"
        async with session.request(method, address, json=body, headers=operator(gw)) as resp:
            return dict(await resp.json()) | {"http_status": resp.status}


async def test_a_pause_outlives_a_restart_and_shows_in_the_status(tmp_path: Path) -> None:
    path = write_config(tmp_path, CONFIG)
    async with running(path) as gw:
        await (await memory(gw).inject("hello", chat_id="c1", message_id="m1")).result
        paused = await call(gw, "POST", "/api/chats/pause", {"chat": "memory:c1", "for_s": 0})
        assert paused["pause"] | {"since": 0} == {
            "chat": "memory:c1", "since": 0, "until": None, "by": "api",
        }  # fmt: skip
    async with running(path) as gw:
        result = await (
            await memory(gw).inject("still there?", chat_id="c1", message_id="m2")
        ).result
        other = await (await memory(gw).inject("hi", chat_id="c2", message_id="m3")).result
        assert (result.stage, result.reason) == ("observe", "paused")
        assert other.reason == "text"  # only the paused chat is quiet
        assert memory(gw).texts() == ["hi"]
        chats = (await call(gw, "GET", "/api/status"))["chats"]
    [view] = chats["paused"]
    assert view["chat"] == "memory:c1" and view["session"] == "default:memory:c1"
    assert [line["content"] for line in view["tail"]] == ["hello", "hello", "still there?"]
    assert {r["address"]: r["paused"] for r in chats["recent"]} == {
        "memory:c1": True,
        "memory:c2": False,
    }


async def test_the_sqlite_store_ends_only_the_pause_that_ran_out(tmp_path: Path) -> None:
    loaded = load(write_config(tmp_path, CONFIG))
    state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
    await state.open()
    try:
        pauses = state.pauses
        await pauses.put(Pause("memory:c1", 100.0, 160.0, "cli"))
        await pauses.put(Pause("memory:c1", 150.0, None, "dashboard"))  # paused anew
        assert await pauses.get("memory:c1") == Pause("memory:c1", 150.0, None, "dashboard")
        assert not await pauses.delete("memory:c1", since=100.0)
        assert [p.since for p in await pauses.all()] == [150.0]
        assert await pauses.delete("memory:c1") and await pauses.get("memory:c1") is None
    finally:
        await state.close()


def test_the_chats_command_needs_the_daemon(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, "agents:\n  default: {backend: echo}\n")
    with pytest.raises(SystemExit) as exited:
        main(["chats", "pause", "telegram:1", "--config", str(path)])
    assert exited.value.code == 69
    assert "chatgate is not running" in capsys.readouterr().err


def test_chatgate_status_lists_the_paused_chats() -> None:
    from chatgate.cli.status_cmd import render
    from tests.gateway.test_status_render import snapshot

    pause = {"chat": "telegram:42", "since": 1.0, "until": None, "by": "dashboard", "tail": []}
    lines = render(snapshot(chats={"paused": [pause], "recent": []})).splitlines()
    at = lines.index("paused chats (a human answers): 1")
    assert lines[at + 1] == "  telegram:42: paused until resumed (by dashboard)"
    assert not any("paused chats" in line for line in render(snapshot()).splitlines())
