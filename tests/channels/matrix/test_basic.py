"""The Matrix channel end to end against a real Synapse: DMs, rooms, threads, mentions."""

from __future__ import annotations

from pathlib import Path

from tests.channels.matrix.support import Person, matrix_config
from tests.fakes.llm import FakeLLM
from tests.harness import running
from tests.support.spans import Spans, failed
from tests.support.synapse import MatrixUser, Synapse


async def test_a_dm_is_answered_in_reply_with_html(
    tmp_path: Path,
    synapse: Synapse,
    bot: MatrixUser,
    alice: Person,
    fake_llm: FakeLLM,
    spans: Spans,
) -> None:
    fake_llm.script("**bold** answer")
    config = matrix_config(
        tmp_path,
        synapse,
        bot,
        fake_llm,
        channel=f'    dm_policy: allowlist\n    allowed_users: ["{alice.user_id}"]',
    )
    async with running(config):
        room = await alice.dm(bot.user_id)
        await alice.wait_joined(room, bot.user_id)
        asked = await alice.send(room, "hello bot")
        [answer] = await alice.answers(bot.user_id, room)
    content = answer["content"]
    assert content["body"] == "bold answer"
    assert content["formatted_body"] == "<b>bold</b> answer"
    assert content["format"] == "org.matrix.custom.html"
    assert content["m.relates_to"]["m.in_reply_to"]["event_id"] == asked
    assert fake_llm.requests[0].last_user_text == "hello bot"
    # traced: the answer is one client span per event sent, under the turn of the DM's trace
    [sent] = spans.deliveries("matrix send m.room.message")
    [root] = spans.named("matrix message")
    assert not failed(sent) and spans.trace_id(sent) == spans.trace_id(root)
