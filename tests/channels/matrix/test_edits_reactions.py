"""Edits (`m.replace`) and reactions (`m.annotation`) per the channel's `edits`/`reactions`,
and answers streamed by editing a draft."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.channels.matrix.support import Person, matrix_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM
from tests.harness import running
from tests.support.synapse import MatrixUser, Synapse
from tests.support.waiting import eventually


def _edit(original: str, text: str) -> dict[str, object]:
    return {
        "msgtype": "m.text",
        "body": f"* {text}",
        "m.new_content": {"msgtype": "m.text", "body": text},
        "m.relates_to": {"rel_type": "m.replace", "event_id": original},
    }


async def _dm(alice: Person, bot: MatrixUser) -> str:
    room = await alice.dm(bot.user_id)
    await alice.wait_joined(room, bot.user_id)
    return room


async def test_edits_ignored_by_default_and_answered_with_new_turn(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel="    dm_policy: open")
    async with running(config):
        room = await _dm(alice, bot)
        asked = await alice.send(room, "helo")
        await alice.answers(bot.user_id, room)
        await alice.send_raw(room, "m.room.message", _edit(asked, "hello"))
        await asyncio.sleep(1.0)
    assert len(alice.messages_from(bot.user_id, room)) == 1
    config = matrix_config(
        tmp_path, synapse, bot, fake_llm, channel="    dm_policy: open\n    edits: new_turn"
    )
    async with running(config):
        await alice.send_raw(room, "m.room.message", _edit(asked, "hello again"))
        answers = await alice.answers(bot.user_id, room, count=2)
    assert answers[1]["content"]["body"] == "echo: hello again"
    assert answers[1]["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == asked


async def test_a_reaction_on_an_answer_is_a_turn_when_configured(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    channel = "    dm_policy: open\n    reactions: turn"
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel=channel)
    async with running(config):
        room = await _dm(alice, bot)
        asked = await alice.send(room, "question")
        [answer] = await alice.answers(bot.user_id, room)
        relation = {"rel_type": "m.annotation", "event_id": asked, "key": "👍"}
        await alice.send_raw(room, "m.reaction", {"m.relates_to": relation})  # not on ours
        relation = {"rel_type": "m.annotation", "event_id": answer["event_id"], "key": "👍"}
        await alice.send_raw(room, "m.reaction", {"m.relates_to": relation})
        answers = await alice.answers(bot.user_id, room, count=2)
        await asyncio.sleep(0.5)
    assert answers[1]["content"]["body"] == "echo: 👍 on your answer"
    assert len(fake_llm.requests) == 2


async def test_a_streamed_answer_is_edited_in_place(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    fake_llm.stream_chunk_delay_s = 0.15
    fake_llm.script(" ".join(f"word{n}" for n in range(30)))
    channel = "    dm_policy: open\n    stream: {enabled: true, min_edit_interval_s: 0.2}"
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel=channel)
    text = config.read_text().replace(
        "    timeout_s: 10\n", "    timeout_s: 10\n    stream: true\n"
    )
    config.write_text(text)
    final = " ".join(f"word{n}" for n in range(30))

    def done() -> bool:
        return any(
            e.get("content", {}).get("m.new_content", {}).get("body") == final
            for e in alice.messages_from(bot.user_id, room)
        )

    async with running(config):
        room = await _dm(alice, bot)
        await alice.send(room, "stream please")
        await alice.wait(done, timeout=40)
    events = alice.messages_from(bot.user_id, room)
    draft = events[0]
    edits = [e for e in events[1:] if "m.new_content" in e["content"]]
    assert edits and all(
        e["content"]["m.relates_to"] == {"rel_type": "m.replace", "event_id": draft["event_id"]}
        for e in edits
    )


async def test_a_redacted_message_still_waiting_is_never_answered(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person, fake_llm: FakeLLM
) -> None:
    config = matrix_config(tmp_path, synapse, bot, fake_llm, channel="    dm_policy: open")
    async with running(config) as gw:
        room = await _dm(alice, bot)
        fake_llm.latency_s = 3
        await alice.send(room, "first")
        await fake_llm.wait_for_requests(1, timeout=30)
        second = await alice.send(room, "second, which I take back")
        await eventually(lambda: gw.rt.journal.get(f"matrix:{second}"), timeout=20)
        await alice.client.redact(room, second)  # type: ignore[arg-type]
        entry = await settled(gw, f"matrix:{second}")
        await alice.answers(bot.user_id, room)
        await asyncio.sleep(1.0)
    assert [a["content"]["body"] for a in alice.messages_from(bot.user_id, room)] == ["echo: first"]
    assert entry.reason == "retracted"
    assert len(fake_llm.requests) == 1
