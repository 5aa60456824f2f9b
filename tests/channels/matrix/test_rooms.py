"""Rooms on a real Synapse: mention gating, threads as sessions, invites from strangers."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.channels.matrix.support import Person, matrix_config
from tests.fakes.llm import FakeLLM
from tests.harness import channel_status, running
from tests.support.synapse import MatrixUser, Synapse


def _allowed(*people: Person, extra: str = "") -> str:
    users = ", ".join(f'"{p.user_id}"' for p in people)
    return f"    allowed_users: [{users}]\n    group_policy: mention_only\n{extra}"


async def _room_with_bot(alice: Person, bot: MatrixUser) -> str:
    room = await alice.room(bot.user_id)
    await alice.wait_joined(room, bot.user_id)
    return room


async def test_a_room_answers_only_a_mention_and_strips_it(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel=_allowed(alice))
    async with running(config):
        room = await _room_with_bot(alice, bot)
        await alice.send(room, "just chatting among humans")
        asked = await alice.send(
            room,
            f"{bot.user_id}: what time is it?",
            **{"m.mentions": {"user_ids": [bot.user_id]}},
        )
        [answer] = await alice.answers(bot.user_id, room)
        await asyncio.sleep(0.5)
    assert answer["content"]["body"] == "echo: what time is it?"
    assert answer["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == asked
    assert len(fake_llm.requests) == 1
    assert len(alice.messages_from(bot.user_id, room)) == 1


async def test_each_thread_is_its_own_session_and_answers_stay_in_it(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    config = matrix_config(
        tmp_path, synapse, bot, fake_llm, channel=_allowed(alice, extra="    threads: true\n")
    )
    mention = {"m.mentions": {"user_ids": [bot.user_id]}}
    async with running(config):
        room = await _room_with_bot(alice, bot)
        roots = [await alice.send(room, f"topic {n}") for n in (1, 2)]
        for n, root in enumerate(roots, 1):
            thread = {"rel_type": "m.thread", "event_id": root, "is_falling_back": True}
            await alice.send(room, f"first in {n}", **{"m.relates_to": thread}, **mention)
            await alice.answers(bot.user_id, room, count=n)
        thread = {"rel_type": "m.thread", "event_id": roots[0], "is_falling_back": True}
        await alice.send(room, "second in 1", **{"m.relates_to": thread}, **mention)
        answers = await alice.answers(bot.user_id, room, count=3)
    for answer, root in zip(answers, [roots[0], roots[1], roots[0]], strict=True):
        relation = answer["content"]["m.relates_to"]
        assert relation["rel_type"] == "m.thread" and relation["event_id"] == root
        assert "m.in_reply_to" in relation
    third = fake_llm.requests[2].messages
    texts = [str(m.get("content")) for m in third]
    assert any("first in 1" in t for t in texts)
    assert not any("first in 2" in t for t in texts)  # the other thread's history stays apart


async def test_an_invite_from_a_stranger_is_declined_without_an_answer(
    tmp_path: Path,
    synapse: Synapse,
    bot: MatrixUser,
    alice: Person,
    bob: Person,
    fake_llm: FakeLLM,
) -> None:
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel=_allowed(alice))
    async with running(config) as gw:
        room = await bob.dm(bot.user_id)

        def left() -> bool:
            return any(
                e.get("type") == "m.room.member"
                and e.get("state_key") == bot.user_id
                and e.get("content", {}).get("membership") == "leave"
                for e in bob.events
                if e.get("room_id") == room
            )

        await bob.wait(left)
        status = channel_status(gw, "matrix")
    assert not bob.messages_from(bot.user_id)
    assert fake_llm.requests == []
    assert status["counters"]["declined"] == 1


async def test_auto_join_all_lets_a_stranger_pair_in_the_dm(
    tmp_path: Path,
    synapse: Synapse,
    bot: MatrixUser,
    bob: Person,
    fake_llm: FakeLLM,
) -> None:
    channel = "    auto_join: all\n    dm_policy: pairing\n"
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel=channel)
    async with running(config):
        room = await bob.dm(bot.user_id)
        await bob.wait_joined(room, bot.user_id)
        await bob.send(room, "hi")
        [answer] = await bob.answers(bot.user_id, room)
    assert fake_llm.requests == []
    body = answer["content"]["body"]
    assert "pair" in body.lower() or "code" in body.lower()


async def test_messages_from_before_the_bot_joined_are_history(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel=_allowed(alice))
    mention = {"m.mentions": {"user_ids": [bot.user_id]}}
    room = await alice.room(name="older")
    await alice.send(room, f"{bot.user_id} did you see this?", **mention)
    async with running(config):
        await alice.client.invite_user(room, bot.user_id)  # type: ignore[arg-type]
        await alice.wait_joined(room, bot.user_id)
        await alice.send(room, f"{bot.user_id} now?", **mention)
        [answer] = await alice.answers(bot.user_id, room)
    assert answer["content"]["body"] == "echo: now?"
    assert len(fake_llm.requests) == 1
