"""Degraded owners read fail-closed, and the event-loop watchdog behind /healthz."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp

from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.telegram import FakeTelegram
from tests.harness import memory, running, url, write_config


def config(tmp_path: Path, fake: FakeLLM, extra: str = "", gateway: str = "") -> Path:
    return write_config(
        tmp_path,
        f"""  supervision: {{provider_probe_s: 30}}
{gateway}
agents:
  default: {{backend: litellm, model: openai/fake-model, api_base: "{fake.base_url}", api_key: sk-x}}
channels:
  memory: {{dm_policy: open}}
{extra}
""",
    )


async def test_model_401_degrades_the_provider_until_it_recovers(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    clock = ManualClock()
    async with running(config(tmp_path, fake_llm), clock=clock) as gw:
        chat = memory(gw)
        fake_llm.fail_next(Fault.unauthorized())
        first = await (await chat.inject("hi")).result
        assert first.reason == "auth_permanent"
        [owner] = gw.degraded.owners()
        assert (owner.kind.value, owner.id) == ("provider", "openai@" + fake_llm.base_url)

        second = await (await chat.inject("anyone?")).result
        await chat.wait_sent(2)
        assert (second.stage, second.reason) == ("degraded", "unavailable")
        # the chat user reads a plain text; the fix (key path, command) is the operator's
        assert "api_key" not in chat.texts()[1] and "chatgate" not in chat.texts()[1]
        assert "try again" in chat.texts()[1]
        assert len(fake_llm.requests) == 1  # fail-closed: the degraded provider was not called

        status = await gw.status()
        assert status["degraded"][0]["owner_kind"] == "provider"
        assert "api_key" in str(status["degraded"][0])

        clock.advance(31)  # the probe interval passed: the next turn is let through as a probe
        third = await (await chat.inject("better now?")).result
    assert third.reason == "text"
    assert gw.degraded.owners() == []
    assert len(fake_llm.requests) == 2


async def test_async_webhook_aimed_at_a_parked_channel_is_told_unavailable(
    tmp_path: Path, fake_llm: FakeLLM, fake_tg: FakeTelegram
) -> None:
    hooks = f"""  webhook:
    routes:
      alerts:
        path: /hooks/alerts
        signature: none
        respond: async
        deliver: {{to: "telegram:42"}}
  telegram: {{token: "1:revoked", api_base: "{fake_tg.base_url.removesuffix("/bot")}"}}
"""
    async with running(config(tmp_path, fake_llm, hooks)) as gw, aiohttp.ClientSession() as http:
        assert gw.channels.statuses["telegram"].state.value == "parked"
        async with http.post(url(gw, "/hooks/alerts"), json={"text": "disk full"}) as resp:
            body = await resp.json()
        journal = await gw.rt.journal.get("webhook:alerts:sha-" + _sha({"text": "disk full"}))
    assert resp.status == 200
    assert body["reason_code"] == "unavailable"
    assert "BotFather" in body["reply"]  # the parked channel's fix hint is the next step
    assert fake_llm.requests == []  # no agent work for a reply that could not be delivered
    assert journal is not None and (journal.stage, journal.reason) == ("degraded", "unavailable")


def _sha(payload: object) -> str:
    import hashlib
    import json

    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:32]


async def test_healthz_fails_while_the_event_loop_is_blocked(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    gateway = "  watchdog: {interval_s: 0.05, max_lag_s: 0.1}\n"
    async with (
        running(config(tmp_path, fake_llm, gateway=gateway)) as gw,
        aiohttp.ClientSession() as http,
    ):
        async with http.get(url(gw, "/healthz")) as resp:
            assert resp.status == 200

        async def hog() -> None:
            for _ in range(12):
                time.sleep(
                    0.15
                )  # a blocking call on the loop: exactly what the watchdog exists for
                await asyncio.sleep(0)

        blocker = asyncio.create_task(hog())
        await asyncio.sleep(0.5)
        async with http.get(url(gw, "/healthz")) as resp:
            during = resp.status, await resp.json()
        await blocker
        await asyncio.sleep(0.3)
        async with http.get(url(gw, "/healthz")) as resp:
            after = resp.status
    assert during[0] == 503 and during[1]["status"] == "event loop stalled"
    assert after == 200
