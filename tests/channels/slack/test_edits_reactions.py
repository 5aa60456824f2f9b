"""Edits, reactions and the user's language on Slack: `message_changed` and `reaction_added`
events per the channel's `edits` and `reactions`, and the locale from users.info; rules
table-tested on event dicts, then end to end through slack-bolt against the fake Slack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatgate.channels.slack.inbound import (
    BotIdentity,
    Ignored,
    normalize,
    normalize_reaction,
    ts_of,
)
from chatgate.model.messages import InboundMessage
from chatgate.model.reasons import DropReason
from chatgate.model.text_ids import TextId
from chatgate.policies.edits import EDIT_MODE, EDIT_OF, EditMode
from chatgate.policies.reactions import CONTEXT_ONLY, ReactionMode
from chatgate.texts import LANGUAGES
from tests.channels.slack.support import events_url, section, slack_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.slack import BOT_USER_ID, FakeSlack
from tests.harness import running
from tests.support.waiting import eventually

BOT = BotIdentity("UBOT", "BBOT", "T1", "chatgate")


def changed(text: str, before: str = "hi", **inner: Any) -> dict[str, Any]:
    message = {"type": "message", "user": "U42", "text": text, "ts": "100.000001"}
    message["edited"] = {"user": "U42", "ts": "200.000002"}
    message.update(inner)
    return {
        "type": "message",
        "subtype": "message_changed",
        "channel": "D1",
        "channel_type": "im",
        "ts": "200.000003",
        "message": message,
        "previous_message": {"type": "message", "user": "U42", "text": before, "ts": "100.000001"},
    }


@pytest.mark.parametrize(
    ("mode", "event", "outcome"),
    [(EditMode.IGNORE, changed("fixed"), DropReason.EDITED_IGNORED),
     (EditMode.NEW_TURN, changed("fixed"), "input"),
     (EditMode.REPLACE, changed("fixed"), "input"),
     (EditMode.NEW_TURN, changed("/stop"), DropReason.EDITED_IGNORED),  # never a command
     (EditMode.NEW_TURN, changed("hi"), DropReason.EDITED_IGNORED),  # an unfurl: same text
     (EditMode.NEW_TURN, changed("fixed", edited=None), DropReason.EDITED_IGNORED),
     (EditMode.NEW_TURN, changed("fixed", user="UBOT"), DropReason.SELF_MESSAGE)],
)  # fmt: skip
def test_message_changed(mode: EditMode, event: dict[str, Any], outcome: object) -> None:
    result = normalize(event, BOT, "slack", edits=mode)
    if outcome != "input":
        assert result == Ignored(outcome, "D1")  # type: ignore[arg-type]
        return
    assert isinstance(result, InboundMessage)
    assert result.text == "fixed" and result.extra[EDIT_OF] == "slack:D1:100.000001"
    assert result.extra[EDIT_MODE] == mode.value and result.received_at == 200.000002
    assert result.key == "slack:D1:edit200.000002:100.000001"
    assert ts_of(result.message_id) == "100.000001"  # the ack reaction goes on the message


def reaction(channel: str = "D1", item_user: str = "UBOT", **fields: Any) -> dict[str, Any]:
    event = {"type": "reaction_added", "user": "U42", "reaction": "thumbsup"}
    event.update(item={"type": "message", "channel": channel, "ts": "300.000001"})
    event.update(item_user=item_user, event_ts="301.000001", **fields)
    return event


ANSWERS = {"C1:300.000001": "299.000001"}  # answer key (as sent) -> its thread


@pytest.mark.parametrize(
    ("mode", "event", "answers", "from_bot", "outcome"),
    [(ReactionMode.TURN, reaction(), {}, False, "turn"),  # a DM: its answer need not be known
     (ReactionMode.CONTEXT, reaction(), {}, False, "context"),
     (ReactionMode.IGNORE, reaction(), {}, False, DropReason.REACTION_IGNORED),
     (ReactionMode.TURN, reaction(item_user="U7"), {}, False, DropReason.REACTION_IGNORED),
     (ReactionMode.TURN, reaction(user="UBOT"), {}, False, DropReason.SELF_MESSAGE),
     (ReactionMode.TURN, reaction(), {}, True, DropReason.REACTION_IGNORED),  # another bot
     (ReactionMode.TURN, reaction("C1"), ANSWERS, False, "turn"),
     (ReactionMode.TURN, reaction("C1"), {}, False, DropReason.REACTION_IGNORED)],  # thread?
)  # fmt: skip
def test_reaction_added(
    mode: ReactionMode,
    event: dict[str, Any],
    answers: dict[str, str | None],
    from_bot: bool,
    outcome: object,
) -> None:
    result = normalize_reaction(event, BOT, "slack", mode, answers, from_bot=from_bot)
    if outcome in ("turn", "context"):
        assert isinstance(result, InboundMessage)
        assert result.text == ":thumbsup: on your answer" and result.is_mention
        assert result.thread_id == answers.get(result.reply_to or "")
        assert bool(result.extra.get(CONTEXT_ONLY)) is (outcome == "context")
        assert ts_of(result.message_id) is None  # names no message to react on
    else:
        assert isinstance(result, Ignored) and result.reason == outcome


async def test_an_edit_is_answered_as_a_new_turn(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = slack_config(
        tmp_path, fake_slack, fake_llm, channel="    dm_policy: open\n    edits: new_turn\n"
    )
    async with running(config) as gw:
        url = events_url(gw)
        original = fake_slack.message_event("what is 2+3?", channel="D1")
        assert (await fake_slack.post_event(url, original))[0] == 200
        await fake_slack.wait_posts(1, timeout=30)
        edit = fake_slack.edited_event(original, "what is 2+4?")
        assert (await fake_slack.post_event(url, edit))[0] == 200
        assert (await fake_slack.post_event(url, edit, retry_num=1))[0] == 200  # once
        unfurl = {**edit, "message": {**edit["message"]}, "previous_message": edit["message"]}
        assert (await fake_slack.post_event(url, unfurl))[0] == 200
        posts = await fake_slack.wait_posts(2, timeout=15)
        command = fake_slack.edited_event(original, "/stop")
        assert (await fake_slack.post_event(url, command))[0] == 200
        ignored = await gw.rt.journal.find("slack", sender_id="U42", limit=10)
    assert [p["text"] for p in posts] == ["echo: what is 2+3?", "echo: what is 2+4?"]
    said = [m["content"] for m in fake_llm.requests[1].messages if m["role"] == "user"]
    assert said == ["what is 2+3?", "what is 2+4?"]
    assert len(fake_llm.requests) == 2 and len(ignored) == 2  # the unfurl and /stop: no entry


async def test_a_reaction_on_an_answer_is_a_turn_and_on_anything_else_ignored(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = slack_config(
        tmp_path, fake_slack, fake_llm, channel="    dm_policy: open\n    reactions: turn\n"
    )
    fake_llm.script("Paris.", "Glad it helped!")
    async with running(config) as gw:
        url = events_url(gw)
        question = fake_slack.app_mention_event("capital of France?")
        assert (await fake_slack.post_event(url, question))[0] == 200
        [answer] = await fake_slack.wait_posts(1, timeout=30)
        on_question = fake_slack.reaction_event("C1", question["ts"])
        assert (await fake_slack.post_event(url, on_question))[0] == 200
        own = fake_slack.reaction_event("C1", answer["ts"], "eyes", user=BOT_USER_ID)
        assert (await fake_slack.post_event(url, own))[0] == 200
        thumbs = fake_slack.reaction_event("C1", answer["ts"], "+1")
        assert (await fake_slack.post_event(url, thumbs))[0] == 200
        posts = await fake_slack.wait_posts(2, timeout=15)
        ignored = gw.rt.metrics.ignored.labels(channel="slack", reason="reaction_ignored")
    assert posts[1]["text"] == "Glad it helped!" and posts[1]["thread_ts"] == question["ts"]
    history = [m["content"] for m in fake_llm.requests[1].messages if m["role"] != "system"]
    assert history == ["capital of France?", "Paris.", ":+1: on your answer"]
    assert ignored._value.get() == 1 and len(fake_llm.requests) == 2


async def test_a_reaction_kept_as_context_reaches_the_next_turn(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = slack_config(
        tmp_path, fake_slack, fake_llm, channel="    dm_policy: open\n    reactions: context\n"
    )
    async with running(config) as gw:
        url = events_url(gw)
        first = fake_slack.message_event("one", channel="D1")
        assert (await fake_slack.post_event(url, first))[0] == 200
        [answer] = await fake_slack.wait_posts(1, timeout=30)
        liked = fake_slack.reaction_event("D1", answer["ts"], "heart")
        assert (await fake_slack.post_event(url, liked))[0] == 200
        entry = await eventually(
            lambda: _observed(gw, f"slack:D1:rx{liked['event_ts']}-{answer['ts']}-heart")
        )
        second = fake_slack.message_event("two", channel="D1")
        assert (await fake_slack.post_event(url, second))[0] == 200
        await fake_slack.wait_posts(2, timeout=15)
    assert entry.state == "done" and len(fake_llm.requests) == 2
    said = [m["content"] for m in fake_llm.requests[1].messages if m["role"] == "user"]
    assert said == ["one", ":heart: on your answer", "two"]


async def _observed(gw: Any, key: str) -> Any:
    entry = await gw.rt.journal.get(key)
    return entry if entry is not None and entry.state == "done" else None


async def test_texts_follow_the_users_slack_locale_looked_up_once(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    fake_slack.add_user("U42", locale="de-DE")
    fake_llm.fail_next(Fault.unauthorized(), times=2)
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        url = events_url(gw)
        for text in ("hallo", "noch da?"):
            event = fake_slack.message_event(text, channel="D1")
            assert (await fake_slack.post_event(url, event))[0] == 200
            await settled(gw, f"slack:D1:{event['ts']}", timeout=15)
        posts = await fake_slack.wait_posts(2, timeout=15)
    german = LANGUAGES["de"]  # the second reads "unavailable": the provider is degraded now
    assert [p["text"] for p in posts] == [
        german[TextId.FAILURE_SETUP],
        german[TextId.FAILURE_UNAVAILABLE],
    ]
    lookups = fake_slack.calls("users.info")
    assert len(lookups) == 1 and lookups[0].params["include_locale"] in (True, "true", "1")


async def test_a_failed_locale_lookup_means_the_default_language(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    fake_slack.fail("users.info", "internal_error")
    fake_llm.fail_next(Fault.unauthorized())
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        event = fake_slack.message_event("hello", channel="D1")
        assert (await fake_slack.post_event(events_url(gw), event))[0] == 200
        [post] = await fake_slack.wait_posts(1, timeout=30)
    assert post["text"] == LANGUAGES["en"][TextId.FAILURE_SETUP]


async def test_replace_swaps_a_message_still_waiting_for_its_turn(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    channel = "    dm_policy: open\n    edits: replace\n    debounce_ms: 1000\n"
    clock = ManualClock()
    async with running(
        slack_config(tmp_path, fake_slack, fake_llm, channel=channel), clock=clock
    ) as gw:
        url = events_url(gw)
        original = fake_slack.message_event("what is 2+3?", channel="D1")
        assert (await fake_slack.post_event(url, original))[0] == 200
        await eventually(lambda: bool(clock.pending()), what="the burst wait")
        edit = fake_slack.edited_event(original, "what is 2+4?")
        assert (await fake_slack.post_event(url, edit))[0] == 200
        replaced = await settled(gw, f"slack:D1:{original['ts']}", timeout=15)
        clock.advance(2.0)
        [post] = await fake_slack.wait_posts(1, timeout=30)
    assert (replaced.stage, replaced.reason) == ("edit", "edit_replaced")
    assert post["text"] == "echo: what is 2+4?" and len(fake_llm.requests) == 1


async def test_another_bots_reaction_is_never_input(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    fake_slack.add_user("U0BOT", is_bot=True)
    channel = "    dm_policy: open\n    reactions: turn\n"
    async with running(slack_config(tmp_path, fake_slack, fake_llm, channel=channel)) as gw:
        url = events_url(gw)
        assert (await fake_slack.post_event(url, fake_slack.message_event("hi")))[0] == 200
        [answer] = await fake_slack.wait_posts(1, timeout=30)
        robot = fake_slack.reaction_event("D1", answer["ts"], "robot_face", user="U0BOT")
        assert (await fake_slack.post_event(url, robot))[0] == 200
        await eventually(lambda: (section(gw).get("ignored") or {}).get("reaction_ignored"))
    assert len(fake_llm.requests) == 1 and len(fake_slack.posted()) == 1


async def test_no_locale_lookup_for_channel_messages_the_bot_will_not_answer(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        url = events_url(gw)
        chatter = fake_slack.message_event("lunch?", channel="C1", channel_type="channel")
        assert (await fake_slack.post_event(url, chatter))[0] == 200
        await settled(gw, f"slack:C1:{chatter['ts']}", timeout=15)
        before = len(fake_slack.calls("users.info"))
        mention = fake_slack.app_mention_event("hello")
        assert (await fake_slack.post_event(url, mention))[0] == 200
        await fake_slack.wait_posts(1, timeout=30)
    assert before == 0 and len(fake_slack.calls("users.info")) == 1
