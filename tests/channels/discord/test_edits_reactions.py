"""Edits, reactions and the user's language on Discord: MESSAGE_UPDATE and MESSAGE_REACTION_ADD
per the channel's `edits` and `reactions`, and the locale interactions carry; rules table-tested
on facts, then end to end through the real discord.py against the fake Discord."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from chatgate.channels.discord.inbound import (
    BotIdentity,
    Ignored,
    MessageFacts,
    Place,
    PressFacts,
    ReactionFacts,
    normalize_edit,
    normalize_press,
    normalize_reaction,
)
from chatgate.model.messages import USER_LANGUAGE, InboundMessage, Target
from chatgate.model.reasons import DropReason
from chatgate.model.text_ids import TextId
from chatgate.policies.edits import EDIT_MODE, EDIT_OF, EditMode
from chatgate.policies.reactions import CONTEXT_ONLY, ReactionMode
from chatgate.texts import LANGUAGES
from tests.channels.discord.support import DM_CHANNEL, DM_USER, discord_config, section, settled
from tests.fakes.clock import ManualClock
from tests.fakes.discord_lite import FakeDiscord
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import running
from tests.support.waiting import eventually

BOT = BotIdentity(2000, "fakebot")
GUILD = Place(4000, guild_id=5000)
EDITED = MessageFacts(
    id=6001, place=GUILD, author_id=3000, author_name="alice", content="fixed",
    mention_ids=(2000,), edited_at=1_800_000_000.5,
)  # fmt: skip
SEND = "POST /channels/{id}/messages"


@pytest.mark.parametrize(
    ("mode", "facts", "outcome"),
    [(EditMode.IGNORE, EDITED, DropReason.EDITED_IGNORED),
     (EditMode.NEW_TURN, EDITED, "input"), (EditMode.REPLACE, EDITED, "input"),
     (EditMode.NEW_TURN, replace(EDITED, content="/new"), DropReason.EDITED_IGNORED),
     (EditMode.NEW_TURN, replace(EDITED, edited_at=0.0), DropReason.EDITED_IGNORED),  # an embed
     (EditMode.NEW_TURN, replace(EDITED, author_id=2000), DropReason.SELF_MESSAGE)],
)  # fmt: skip
def test_edits(mode: EditMode, facts: MessageFacts, outcome: object) -> None:
    result = normalize_edit(facts, BOT, "discord", frozenset(), mode)
    if outcome != "input":
        assert isinstance(result, Ignored) and result.reason == outcome
        return
    assert isinstance(result, InboundMessage) and result.text == "fixed"
    assert result.message_id == "6001:edit:1800000000.500"
    assert result.extra[EDIT_OF] == "discord:6001" and result.extra[EDIT_MODE] == mode.value
    assert result.reply_target == Target("discord", "4000", None, "6001")  # quotes the message


REACTION = ReactionFacts(message_id=7001, place=GUILD, user_id=3000, emoji="👍",
                         message_author_id=2000)  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "facts", "answers", "outcome"),
    [(ReactionMode.TURN, REACTION, set(), "turn"),
     (ReactionMode.CONTEXT, REACTION, set(), "context"),
     (ReactionMode.IGNORE, REACTION, set(), DropReason.REACTION_IGNORED),
     (ReactionMode.TURN, replace(REACTION, message_author_id=3001), set(),
      DropReason.REACTION_IGNORED),  # on someone else's message
     (ReactionMode.TURN, replace(REACTION, message_author_id=None), {7001}, "turn"),
     (ReactionMode.TURN, replace(REACTION, message_author_id=None), set(),
      DropReason.REACTION_IGNORED),
     (ReactionMode.TURN, replace(REACTION, user_id=2000), set(), DropReason.SELF_MESSAGE),
     (ReactionMode.TURN, replace(REACTION, user_is_bot=True), set(),
      DropReason.REACTION_IGNORED)],  # another bot: never input (no loops)
)  # fmt: skip
def test_reactions(
    mode: ReactionMode, facts: ReactionFacts, answers: set[int], outcome: object
) -> None:
    result = normalize_reaction(facts, BOT, "discord", frozenset(), mode, answers)
    if outcome not in ("turn", "context"):
        assert isinstance(result, Ignored) and result.reason == outcome
        return
    assert isinstance(result, InboundMessage) and result.text == "👍 on your answer"
    assert result.reply_to == "7001" and result.is_mention
    assert bool(result.extra.get(CONTEXT_ONLY)) is (outcome == "context")


def test_a_press_carries_the_users_locale() -> None:
    press = PressFacts(id=9001, kind=3, place=GUILD, user_id=3000, user_name="alice",
                       custom_id="b0:yes", message_id=7001, locale="de")  # fmt: skip
    result = normalize_press(press, "discord", frozenset())
    assert isinstance(result, InboundMessage) and result.extra[USER_LANGUAGE] == "de"
    plain = normalize_press(replace(press, locale=""), "discord", frozenset())
    assert isinstance(plain, InboundMessage) and USER_LANGUAGE not in plain.extra


async def test_an_edit_is_answered_as_a_new_turn_but_never_replays_a_command(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    config = discord_config(
        tmp_path, fake_discord, fake_llm, channel="    dm_policy: open\n    edits: new_turn\n"
    )
    async with running(config) as gw:
        original = fake_discord.dm(DM_USER, "what is 2+3?")
        await fake_discord.wait_for(SEND)
        fake_discord.edit(original, "what is 2+4?")
        replies = await fake_discord.wait_for(SEND, 2)
        fake_discord.edit(original, "/new")
        await eventually(lambda: section(gw).get("ignored"))
        ignored = section(gw)["ignored"]
    assert [c.json["content"] for c in replies] == ["echo: what is 2+3?", "echo: what is 2+4?"]
    said = [m["content"] for m in fake_llm.requests[1].messages if m["role"] == "user"]
    assert said == ["what is 2+3?", "what is 2+4?"]
    assert ignored == {"edited_ignored": 1} and len(fake_llm.requests) == 2
    [identify] = fake_discord.identifies  # reactions: ignore asks for no reaction intents
    assert not identify["intents"] & ((1 << 10) | (1 << 13))


async def test_a_reaction_on_an_answer_is_a_turn_and_others_are_ignored(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    config = discord_config(tmp_path, fake_discord, fake_llm, channel="    reactions: turn\n")
    fake_llm.script("Paris.", "Glad it helped!")
    async with running(config) as gw:
        question = fake_discord.post(4000, "capital of France?", guild_id=5000, mention=True)
        await fake_discord.wait_for(SEND)
        answer = fake_discord.created[0]
        fake_discord.react(int(question["id"]))  # on the user's own message
        fake_discord.react(int(answer["id"]), user_id=9000, bot=True)  # another bot
        fake_discord.react(int(answer["id"]), "🎉")
        replies = await fake_discord.wait_for(SEND, 2)
        await eventually(lambda: sum((section(gw).get("ignored") or {}).values()) == 2)
        ignored = section(gw)["ignored"]
    assert replies[1].json["content"] == "Glad it helped!"
    history = [m["content"] for m in fake_llm.requests[1].messages if m["role"] != "system"]
    assert history == ["capital of France?", "Paris.", "🎉 on your answer"]
    assert ignored == {"reaction_ignored": 2} and len(fake_llm.requests) == 2
    identify = [f for f in fake_discord.identifies if f.get("intents")]
    assert identify and identify[0]["intents"] & (1 << 10) and identify[0]["intents"] & (1 << 13)


async def test_a_reaction_kept_as_context_reaches_the_next_turn(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    config = discord_config(
        tmp_path, fake_discord, fake_llm, channel="    dm_policy: open\n    reactions: context\n"
    )
    async with running(config) as gw:
        fake_discord.dm(DM_USER, "one")
        await fake_discord.wait_for(SEND)
        answer = int(fake_discord.created[0]["id"])
        fake_discord.react(answer, "❤️")
        await settled(gw, f"discord:rx:{answer}:{DM_USER}:❤️")
        fake_discord.dm(DM_USER, "two")
        await fake_discord.wait_for(SEND, 2)
    said = [m["content"] for m in fake_llm.requests[1].messages if m["role"] == "user"]
    assert said == ["one", "❤️ on your answer", "two"] and len(fake_llm.requests) == 2


async def test_texts_follow_the_locale_of_the_users_interactions(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    async with running(discord_config(tmp_path, fake_discord, fake_llm)):
        fake_discord.dm(DM_USER, "hello")
        await fake_discord.wait_for(SEND)
        answer = int(fake_discord.created[0]["id"])
        fake_llm.fail_next(Fault.unauthorized(), times=2)
        fake_discord.press(answer, "b0:yes", locale="de")
        await fake_discord.wait_for(SEND, 2)
        fake_discord.dm(DM_USER, "noch da?")  # a message: the language its sender's press told
        replies = await fake_discord.wait_for(SEND, 3)
    german = LANGUAGES["de"]
    assert [c.json["content"] for c in replies[1:]] == [
        german[TextId.FAILURE_SETUP],
        german[TextId.FAILURE_UNAVAILABLE],
    ]
    assert replies[1].path == f"/channels/{DM_CHANNEL}/messages"


async def test_replace_swaps_a_message_still_waiting_for_its_turn(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    channel = "    dm_policy: open\n    edits: replace\n    debounce_ms: 1000\n"
    clock = ManualClock()
    config = discord_config(tmp_path, fake_discord, fake_llm, channel=channel)
    async with running(config, clock=clock) as gw:
        original = fake_discord.dm(DM_USER, "what is 2+3?")
        await eventually(lambda: bool(clock.pending()), what="the burst wait")
        fake_discord.edit(original, "what is 2+4?")
        replaced = await settled(gw, f"discord:{original['id']}")
        clock.advance(2.0)
        [reply] = await fake_discord.wait_for(SEND)
    assert (replaced.stage, replaced.reason) == ("edit", "edit_replaced")
    assert reply.json["content"] == "echo: what is 2+4?" and len(fake_llm.requests) == 1
