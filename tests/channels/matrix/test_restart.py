"""Restarts against a real Synapse: what arrived while the bot was away is answered once, and a
kill -9 mid-turn loses nothing and answers nothing twice (the sync token follows the journal)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.channels.matrix.support import Person, matrix_config
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.harness import over_http, running
from tests.support.synapse import MatrixUser, Synapse


def _config(tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, llm: FakeLLM) -> Path:
    channel = f'    dm_policy: allowlist\n    allowed_users: ["{alice.user_id}"]'
    return matrix_config(tmp_path, synapse, bot, llm, channel=channel)


async def test_a_restart_answers_what_came_meanwhile_once(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    config = _config(tmp_path, synapse, bot, alice, fake_llm)
    async with running(config):
        room = await alice.dm(bot.user_id)
        await alice.wait_joined(room, bot.user_id)
        await alice.send(room, "before")
        await alice.answers(bot.user_id, room)
    await alice.send(room, "while away")
    async with running(config):
        answers = await alice.answers(bot.user_id, room, count=2)
        await asyncio.sleep(1.0)
    bodies = [a["content"]["body"] for a in alice.messages_from(bot.user_id, room)]
    assert bodies == ["echo: before", "echo: while away"]
    assert len(answers) == 2


@pytest.mark.slow
async def test_kill9_mid_turn_answers_each_message_exactly_once(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    config = _config(tmp_path, synapse, bot, alice, over_http(fake_llm))
    room = await alice.dm(bot.user_id)
    fake_llm.latency_s = 60
    first = await Daemon(config).start()
    try:
        await alice.wait_joined(room, bot.user_id)
        await alice.send(room, "one")
        await alice.send(room, "two")
        await fake_llm.wait_for_requests(1, timeout=60)  # a turn is running
    finally:
        first.kill9()
        await first.wait()
    fake_llm.latency_s = 0
    assert alice.messages_from(bot.user_id, room) == []
    second = await Daemon(config, log_name="daemon2.log").start()
    try:
        await alice.answers(bot.user_id, room, count=2, timeout=60)
        await asyncio.sleep(1.5)
    finally:
        assert await second.terminate() == 0
    bodies = sorted(a["content"]["body"] for a in alice.messages_from(bot.user_id, room))
    assert bodies == ["echo: one", "echo: two"]
