"""The Discord gateway on a bad day: drops, invalid sessions, fatal close codes, deafness, crashes."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import aiohttp
import pytest

from tests.channels.discord.support import discord_config, eventually_state, section
from tests.channels.telegram.support import api_base
from tests.daemon import Daemon, run_cli
from tests.fakes.discord_lite import TOKEN, UNAUTHORIZED, UNAVAILABLE, FakeDiscord
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import TOKEN as TG_TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.harness import over_http, running, url

SEND = "POST /channels/{id}/messages"
USERS = range(3100, 3120)


def contents(fake: FakeDiscord) -> list[str]:
    return sorted(str(c.json["content"]) for c in fake.sent())


async def test_a_socket_dropped_mid_burst_resumes_and_nothing_is_lost_or_doubled(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_discord.resume_overlap = 3  # Discord may replay events the client already had
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        for user in USERS[:10]:
            fake_discord.dm(user, f"question {user}")
        await asyncio.sleep(0.05)
        await fake_discord.drop(4000)
        for user in USERS[10:]:  # sent while the socket is down: replayed on RESUME
            fake_discord.dm(user, f"question {user}")
        await fake_discord.wait_for(SEND, len(USERS), timeout=30)
        assert await gw.pipeline.scheduler.wait_idle(10)  # every turn, and any duplicate, has run
        gateway = section(gw)["gateway"]
    assert contents(fake_discord) == sorted(f"echo: question {u}" for u in USERS)
    assert len(fake_discord.identifies) == 1 and len(fake_discord.resumes) == 1
    assert gateway["resume"] == 1 and len(fake_llm.requests) == len(USERS)


async def test_an_invalid_session_makes_discord_py_identify_again(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        fake_discord.dm(3000, "before")
        await fake_discord.wait_for(SEND)
        await fake_discord.invalidate()
        for _ in range(500):  # discord.py waits 5 s before a repeat IDENTIFY (Discord's limit)
            if fake_discord.connected and len(fake_discord.identifies) == 2:
                break
            await asyncio.sleep(0.02)
        fake_discord.dm(3000, "after")
        await fake_discord.wait_for(SEND, 2)
        assert section(gw)["state"] == "running"
    assert contents(fake_discord) == ["echo: after", "echo: before"]
    assert len(fake_discord.identifies) == 2 and fake_discord.resumes == []


WEBHOOK = """  webhook:
    routes:
      ping:
        path: /hooks/ping
        signature: none
        prompt: "{payload.text}"
"""


async def test_close_4014_parks_discord_with_the_intents_hint_while_others_keep_serving(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM, fake_tg: FakeTelegram
) -> None:
    fake_discord.refuse_identify_with = 4014
    telegram = (
        f'  telegram:\n    token: "{TG_TOKEN}"\n    api_base: {api_base(fake_tg)}\n'
        "    dm_policy: open\n    poll_timeout_s: 1\n"
    )
    config = discord_config(tmp_path, fake_discord, fake_llm, extra=telegram + WEBHOOK)
    async with running(config) as gw, aiohttp.ClientSession() as http:
        parked = await eventually_state(gw, "parked")
        async with http.post(url(gw, "/hooks/ping"), json={"text": "still there?"}) as resp:
            assert (await resp.json())["reply"] == "echo: still there?"
        fake_tg.dm(42, "and telegram?")
        [tg_reply] = await fake_tg.wait_for("sendMessage", timeout=30)
        code, out, _err = await run_cli("status", "--config", str(config), "--url", url(gw, ""))
    assert "4014" in parked["error"]
    assert (
        "Privileged Gateway Intents" in parked["hint"]
        and "Message Content Intent" in parked["hint"]
    )
    assert tg_reply.params["text"] == "echo: and telegram?"
    assert len(fake_discord.identifies) == 1  # parked at once, not retried
    assert (
        code == 0 and "discord      parked" in out and "fix: Discord refused the privileged" in out
    )


async def test_a_rejected_token_parks_and_the_token_never_shows(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    config = discord_config(tmp_path, fake_discord, fake_llm)
    fake_discord.token = "another-token"  # ours is now wrong: GET /users/@me answers 401
    async with running(config) as gw:
        parked = await eventually_state(gw, "parked")
        _code, out, err = await run_cli(
            "status", "--json", "--config", str(config), "--url", url(gw, "")
        )
    assert "Reset Token" in parked["hint"]
    assert TOKEN not in json.dumps(parked) + out + err + caplog.text


async def test_a_401_on_send_parks_the_channel(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_discord.fail(SEND, UNAUTHORIZED)
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        fake_discord.dm(3000, "hello")
        parked = await eventually_state(gw, "parked")
        dlq = await gw.rt.dead_letters.list()
    assert "rejected the bot token" in parked["error"]
    assert [d.kind for d in dlq] == ["auth_fatal"]


async def test_a_connected_but_deaf_gateway_is_restarted_by_the_watchdog(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    config = discord_config(
        tmp_path,
        fake_discord,
        fake_llm,
        gateway="  supervision: {stall_check_s: 0.2, backoff_initial_s: 0.1}\n",
        extra="    stale_after_s: 0.5\n",
    )
    async with running(config) as gw:
        fake_discord.deaf = True
        fake_discord.fail("GET /users/{id}", *[UNAVAILABLE] * 3)
        for _ in range(300):
            if len(fake_discord.identifies) >= 2:
                break
            await asyncio.sleep(0.02)
        fake_discord.deaf = False
        await eventually_state(gw, "running")
        fake_discord.dm(3000, "are you there?")
        [reply] = await fake_discord.wait_for(SEND, timeout=30)
        restarts = section(gw)["restarts"]
    assert reply.json["content"] == "echo: are you there?"
    assert len(fake_discord.identifies) >= 2 and restarts >= 1


async def test_a_quiet_gateway_whose_probe_answers_is_left_alone(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    config = discord_config(
        tmp_path,
        fake_discord,
        fake_llm,
        gateway="  supervision: {stall_check_s: 0.2}\n",
        extra="    stale_after_s: 0.3\n",
    )
    async with running(config) as gw:
        await asyncio.sleep(1.2)
        assert section(gw)["restarts"] == 0
    assert len(fake_discord.identifies) == 1
    assert len(fake_discord.calls_to("GET /users/{id}")) >= 2  # probed, found alive


@pytest.mark.slow
async def test_kill9_mid_turn_answers_each_message_exactly_once_after_restart(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    config = discord_config(tmp_path, fake_discord, over_http(fake_llm))
    fake_llm.latency_s = 60
    first = await Daemon(config).start()
    for _ in range(500):
        if fake_discord.connected:
            break
        await asyncio.sleep(0.02)
    users = [3101, 3102, 3103]
    for user in users:
        fake_discord.dm(user, f"question from {user}")
    await fake_llm.wait_for_requests(len(users), timeout=60)  # journaled, turns running
    first.kill9()
    await first.wait()
    fake_llm.latency_s = 0
    assert fake_discord.sent() == []
    second = await Daemon(config, log_name="daemon2.log").start()
    try:
        await fake_discord.wait_for(SEND, len(users), timeout=60)
    finally:
        assert await second.terminate() == 0
    assert contents(fake_discord) == sorted(f"echo: question from {u}" for u in users)
    assert sorted(c.path for c in fake_discord.sent()) == sorted(
        f"/channels/{7_000_000 + u}/messages" for u in users
    )
