"""Telegram failure cases the operator cares about: crashes, bad tokens, conflicts, stalls, pairing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest

from chatgate.policies.channel_states import ChannelState
from tests.channels.telegram.support import telegram_config
from tests.daemon import Daemon, run_cli
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import over_http, running, url
from tests.support.spacing import assert_spaced

WEBHOOK = """  webhook:
    routes:
      ping:
        path: /hooks/ping
        signature: none
        prompt: "{payload.text}"
"""


@pytest.mark.slow
async def test_kill9_after_a_batch_answers_every_update_exactly_once(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(tmp_path, fake_tg, over_http(fake_llm), channel="    dm_policy: open")
    fake_llm.latency_s = 60
    first = await Daemon(config).start()
    await fake_tg.wait_for("getUpdates", timeout=20)
    users = [101, 102, 103, 104, 105]
    for user in users:
        fake_tg.dm(user, f"question from {user}")
    await fake_llm.wait_for_requests(1, timeout=20)  # the batch was fetched and is being handled
    first.kill9()
    await first.wait()
    fake_llm.latency_s = 0
    assert fake_tg.calls_of("sendMessage") == []

    second = await Daemon(config, log_name="daemon2.log").start()
    try:
        await fake_tg.wait_for("sendMessage", count=len(users), timeout=30)
        await asyncio.sleep(1.5)  # room for a duplicate to show up if there were one
        sent = fake_tg.calls_of("sendMessage")
    finally:
        assert await second.terminate() == 0
    assert sorted(c.params["chat_id"] for c in sent) == users
    assert sorted(c.params["text"] for c in sent) == sorted(
        f"echo: question from {u}" for u in users
    )


async def test_unknown_user_pairs_through_the_cli_then_is_answered(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel="    dm_policy: pairing")
    async with running(config):
        fake_tg.dm(777, "hi, can I use this?", first_name="Grace")
        [notice] = await fake_tg.wait_for("sendMessage", timeout=15)
        code = notice.params["text"].split("\n\n")[1].strip()
        assert len(code) == 8 and fake_llm.requests == []
        status, out, err = await run_cli(
            "pairing", "approve", "telegram", code, "--config", str(config)
        )
        assert status == 0, err
        assert "approved telegram user 777" in out
        approved = await fake_tg.wait_for("sendMessage", count=2, timeout=15)
        assert "access" in approved[1].params["text"]
        fake_tg.dm(777, "great, what's 2+2?")
        answers = await fake_tg.wait_for("sendMessage", count=3, timeout=15)
    assert answers[2].params["text"] == "echo: great, what's 2+2?"
    assert [r.last_user_text for r in fake_llm.requests] == ["great, what's 2+2?"]


async def test_invalid_token_parks_telegram_while_webhooks_keep_serving(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(tmp_path, fake_tg, fake_llm, token="999:not-the-token")
    config.write_text(config.read_text() + WEBHOOK)
    async with running(config) as gw, aiohttp.ClientSession() as http:
        status = gw.channels.statuses["telegram"]
        assert status.state is ChannelState.PARKED
        assert "BotFather" in status.hint
        async with http.post(url(gw, "/hooks/ping"), json={"text": "still there?"}) as resp:
            assert resp.status == 200
            assert (await resp.json())["reply"] == "echo: still there?"
        code, out, err = await run_cli("status", "--config", str(config), "--url", url(gw, ""))
        assert code == 0, err
    assert "telegram     parked" in out
    assert "why: Telegram rejected the bot token" in out
    assert "not-the-token" not in out + err  # PTB's InvalidToken message quotes it
    assert "fix: the bot token was rejected" in out
    assert len(fake_tg.calls_of("getMe")) == 1  # parked, not retried


async def test_conflict_409_parks_with_a_hint_naming_the_cause(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_tg.conflict = True
    config = telegram_config(tmp_path, fake_tg, fake_llm)
    async with running(config) as gw:
        for _ in range(100):
            if gw.channels.statuses["telegram"].state is ChannelState.PARKED:
                break
            await asyncio.sleep(0.05)
        snapshot = {c["name"]: c for c in gw.channels.snapshot()}
    telegram = snapshot["telegram"]
    assert telegram["state"] == "parked"
    assert "409" in telegram["error"]
    assert "another process is polling this bot token" in telegram["hint"]


async def test_stalled_long_poll_is_rebuilt_and_messages_flow_again(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(
        tmp_path, fake_tg, fake_llm, channel="    dm_policy: open\n    stale_after_s: 1"
    )
    async with running(config) as gw:
        await fake_tg.wait_for("getUpdates", timeout=10)
        fake_tg.stall_get_updates = True
        calls_before = fake_tg.get_updates_calls
        await asyncio.sleep(2.5)  # longer than stale_after_s: the watchdog must act
        fake_tg.stall_get_updates = False
        fake_tg.dm(42, "are you there?")
        [reply] = await fake_tg.wait_for("sendMessage", timeout=15)
        async with aiohttp.ClientSession() as http, http.get(url(gw, "/metrics")) as resp:
            metrics = await resp.text()
        telegram = {c["name"]: c for c in gw.channels.snapshot()}["telegram"]
    assert reply.params["text"] == "echo: are you there?"
    assert telegram["poller_rebuilds"] >= 1
    assert fake_tg.get_updates_calls > calls_before
    assert (
        'chatgate_channel_events_total{channel="telegram",metric="telegram_poller_rebuilt"}'
        in metrics
    )


async def test_streaming_sends_a_draft_then_throttled_edits_then_the_final_text(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    reply = " ".join(f"word{i}" for i in range(24))
    fake_llm.script(reply)
    fake_llm.stream_chunk_delay_s = 0.05
    config = telegram_config(
        tmp_path,
        fake_tg,
        fake_llm,
        channel="    dm_policy: open\n    stream: {enabled: true, min_edit_interval_s: 0.3}",
    )
    config.write_text(
        config.read_text().replace("    timeout_s: 10\n", "    timeout_s: 10\n    stream: true\n")
    )
    async with running(config):
        fake_tg.dm(42, "tell me a story")
        await fake_tg.wait_for(
            "editMessageText", where=lambda c: c.params.get("text") == reply, timeout=20
        )
    [draft] = fake_tg.calls_of("sendMessage")
    edits = fake_tg.calls_of("editMessageText")
    assert draft.params["text"].endswith("…") and len(draft.params["text"]) < len(reply)
    assert len(edits) >= 2  # intermediate edits, then the final one
    assert edits[-1].params["text"] == reply
    assert_spaced([c.at for c in [draft, *edits]], 0.3)
    assert json.dumps(edits[0].params).count("word") < 24
