"""Plugin events via the `chatgate.plugins` entry-point group, the HTTP surface and metrics."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.llm import FakeLLM
from tests.harness import http, memory, operator, running, url, write_config

PLUGIN = """
RECEIVED = []


def register(bus):
    async def on_event(event):
        RECEIVED.append((event.name.value, dict(event.data)))

    bus.subscribe(on_event)
"""


def install_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    dist = site / "chatgate_probe_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (site / "chatgate_probe_plugin.py").write_text(PLUGIN)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: chatgate-probe-plugin\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[chatgate.plugins]\nprobe = chatgate_probe_plugin:register\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "chatgate_probe_plugin", raising=False)


def config(tmp_path: Path, fake: FakeLLM, gateway: str = "") -> Path:
    return write_config(
        tmp_path,
        textwrap.dedent(f"""\
        {gateway}
        agents:
          default: {{backend: litellm, model: openai/fake-model, api_base: "{fake.base_url}", api_key: sk-x}}
        channels:
          memory: {{dm_policy: open}}
        """),
    )


async def test_plugin_receives_message_events(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path, monkeypatch)
    async with running(config(tmp_path, fake_llm)) as gw:
        assert gw.events.plugins == ["probe"]
        await (await memory(gw).inject("hello", message_id="p1")).result
        await gw.events.drain()
    import chatgate_probe_plugin  # type: ignore[import-not-found]

    names = [name for name, _ in chatgate_probe_plugin.RECEIVED]
    assert names == ["message_received", "message_sent", "turn_finished"]
    assert chatgate_probe_plugin.RECEIVED[0][1]["key"] == "memory:p1"
    finished = chatgate_probe_plugin.RECEIVED[2][1]
    assert finished["reason"] == "text" and finished["delivery"] == "sent"
    assert finished["latency_s"] >= finished["agent_s"] >= 0


async def test_health_ready_metrics_and_status_shape(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with running(config(tmp_path, fake_llm)) as gw, http() as client:
        await (await memory(gw).inject("hi")).result
        async with client.get(url(gw, "/healthz")) as r:
            assert r.status == 200
        async with client.get(url(gw, "/readyz")) as r:
            assert r.status == 200
        async with client.get(url(gw, "/metrics")) as r:
            metrics = await r.text()
        async with client.get(url(gw, "/api/status")) as r:
            status = await r.json()
        async with client.get(url(gw, "/no/such/route")) as r:
            assert r.status == 404
    assert 'chatgate_admission_total{channel="memory",reason="allowed"} 1.0' in metrics
    assert 'chatgate_turns_total{agent="default",outcome="text",reason="text"} 1.0' in metrics
    assert 'chatgate_delivery_total{channel="memory",kind="",status="sent"} 1.0' in metrics
    assert "chatgate_overhead_seconds_count 1.0" in metrics
    assert status["ready"] is True
    assert status["sessions"]["warm"] == 1
    assert [c["name"] for c in status["channels"]] == ["memory"]


async def test_readyz_fails_while_draining(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with running(config(tmp_path, fake_llm)) as gw, http() as client:
        gw.life.draining = True
        async with client.get(url(gw, "/readyz")) as r:
            assert r.status == 503
            assert (await r.json())["status"] == "draining"
        gw.life.draining = False


async def test_reload_api_applies_hot_keys_and_rejects_bad_files(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    path = config(tmp_path, fake_llm)
    async with running(path) as gw, http() as client:
        chat = memory(gw)
        assert (await (await chat.inject("hi", sender_id="u9")).result).reason == "text"
        path.write_text(
            path.read_text().replace("memory: {dm_policy: open}", "memory: {dm_policy: disabled}")
        )
        async with client.post(url(gw, "/api/reload"), headers=operator(gw)) as r:
            body = await r.json()
        assert r.status == 200 and body["ok"] and body["reconfigured_channels"] == ["memory"]
        assert (
            await (await chat.inject("hi again", sender_id="u9")).result
        ).reason == "dm_disabled"
        path.write_text(path.read_text() + "\nunknown_section: {}\n")
        async with client.post(url(gw, "/api/reload"), headers=operator(gw)) as r:
            rejected = r.status, await r.json()
        assert (
            await (await chat.inject("still disabled", sender_id="u9")).result
        ).reason == "dm_disabled"
    assert rejected[0] == 422 and "unknown_section" in rejected[1]["error"]
    assert memory(gw).started == 1  # the channel was never restarted
