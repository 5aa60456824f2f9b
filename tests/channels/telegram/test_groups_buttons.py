"""End to end through the real PTB: group admission, observed context, topics and buttons."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chatgate.state.records import JournalState
from tests.channels.telegram.helpers_b import key_of, python_agent_config, settled
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import BOT_USERNAME, FakeTelegram
from tests.harness import running

GROUP = -1005550001
TIMEOUT = 15.0


async def test_unmentioned_group_message_is_dropped_with_a_recorded_reason(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel="    group_policy: mention_only")
    async with running(config) as gw:
        quiet = fake_tg.group_message(GROUP, 7, "anyone up for lunch?")
        loud = fake_tg.group_message(GROUP, 7, "what time is it?", mention=True)
        await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        entry = await settled(gw, key_of(quiet))
    assert entry.state is JournalState.DROPPED
    assert (entry.stage, entry.reason) == ("admission", "group_mention_only")
    assert [r.last_user_text for r in fake_llm.requests] == ["what time is it?"]
    assert key_of(loud) != key_of(quiet)


async def test_observed_messages_are_context_for_the_next_mention(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel="    group_policy: observe")
    async with running(config) as gw:
        first = fake_tg.group_message(GROUP, 7, "the deploy window is 17:00 UTC")
        second = fake_tg.group_message(GROUP, 8, "and the freeze starts friday")
        for update in (first, second):
            entry = await settled(gw, key_of(update))
            assert (entry.stage, entry.reason) == ("observe", "observe")
        assert fake_llm.requests == [] and fake_tg.calls_of("sendMessage") == []
        fake_tg.group_message(GROUP, 9, "when can we deploy?", mention=True)
        await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
    [request] = fake_llm.requests
    users = [m["content"] for m in request.messages if m["role"] == "user"]
    assert users[-1] == "when can we deploy?"
    assert "the deploy window is 17:00 UTC" in users[:-1]
    assert "and the freeze starts friday" in users[:-1]


async def test_mention_in_a_topic_is_answered_as_a_reply_in_that_topic(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 0.8  # longer than the 0.5 s after which the typing hint goes out
    config = telegram_config(tmp_path, fake_tg, fake_llm)
    async with running(config):
        trigger = fake_tg.group_message(GROUP, 7, "status?", mention=True, thread_id=42)
        [call] = await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
    assert call.params["chat_id"] == GROUP
    assert call.params["message_thread_id"] == 42
    assert call.params["reply_parameters"]["message_id"] == trigger["message"]["message_id"]
    assert call.params["text"] == "echo: status?"
    [reply] = fake_tg.sent
    assert reply["reply_to_message"]["text"] == f"@{BOT_USERNAME} status?"
    typing = fake_tg.calls_of("sendChatAction")
    assert typing and {(c.params["chat_id"], c.params["message_thread_id"]) for c in typing} == {
        (GROUP, 42)
    }


async def test_two_topics_keep_separate_conversations(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(tmp_path, fake_tg, fake_llm)
    async with running(config):
        fake_tg.group_message(GROUP, 7, "topic one here", mention=True, thread_id=1)
        await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        fake_tg.group_message(GROUP, 7, "topic two here", mention=True, thread_id=2)
        await fake_tg.wait_for("sendMessage", count=2, timeout=TIMEOUT)
    second = fake_llm.requests[1]
    contents = [m["content"] for m in second.messages]
    assert "topic two here" in contents
    assert "topic one here" not in contents


async def test_anonymous_admins_are_not_mistaken_for_a_bot_loop(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    """Anonymous admins post through a placeholder bot user; the loop guard must not trip."""
    guard = "  loop_guard: {max_bot_turns: 2}"
    config = telegram_config(tmp_path, fake_tg, fake_llm, gateway=guard)
    anonymous = {"id": 1087968824, "is_bot": True, "first_name": "Group"}
    group = {"id": GROUP, "type": "supergroup", "title": "Team"}
    bot_chat = -1005550002
    async with running(config) as gw:
        for n in range(3):
            text = f"@{BOT_USERNAME} admin question {n}"
            mention = {"type": "mention", "offset": 0, "length": len(BOT_USERNAME) + 1}
            message = {
                "message_id": 900 + n,
                "date": int(time.time()),
                "chat": group,
                "sender_chat": group,
                "from": anonymous,
                "text": text,
                "entities": [mention],
            }
            fake_tg.enqueue({"message": message})
            fake_tg.group_message(bot_chat, 555, f"bot chatter {n}", mention=True, is_bot=True)
        await fake_tg.wait_for(
            "sendMessage", count=3, where=lambda c: c.params["chat_id"] == GROUP, timeout=TIMEOUT
        )
        await fake_tg.wait_for(
            "sendMessage", count=2, where=lambda c: c.params["chat_id"] == bot_chat, timeout=TIMEOUT
        )
        assert await gw.pipeline.scheduler.wait_idle(10)  # every turn, and any duplicate, has run
    to_bot = [c for c in fake_tg.calls_of("sendMessage") if c.params["chat_id"] == bot_chat]
    assert len(to_bot) == 2  # a real bot streak is still cut off


# -- buttons -----------------------------------------------------------------------------------

LONG_VALUE = "x" * 200
BUTTON_AGENT = f"""
def agent(turn):
    if turn.text == "menu":
        return {{"blocks": [
            {{"type": "text", "text": "Pick"}},
            {{"type": "buttons", "buttons": [
                {{"label": "Yes", "value": "yes"}},
                {{"label": "Long", "value": "{LONG_VALUE}"}},
            ]}},
        ]}}
    return "got " + str(len(turn.text)) + ": " + turn.text
"""


def _keyboard(call_params: dict[str, object]) -> list[dict[str, str]]:
    markup = call_params["reply_markup"]
    assert isinstance(markup, dict)
    return [button for row in markup["inline_keyboard"] for button in row]


async def test_buttons_round_trip_with_a_long_value_across_a_restart(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = python_agent_config(
        tmp_path, monkeypatch, fake_tg, fake_llm, module="tg_button_agent", source=BUTTON_AGENT
    )
    async with running(config):
        fake_tg.dm(42, "menu")
        [menu] = await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        buttons = _keyboard(menu.params)
        assert [b["text"] for b in buttons] == ["Yes", "Long"]
        assert all(len(b["callback_data"].encode()) <= 64 for b in buttons)
        assert buttons[0]["callback_data"] == "yes"
        assert buttons[1]["callback_data"].startswith("ref:")  # stored, resolved on press
        menu_id = fake_tg.sent[0]["message_id"]

        fake_tg.callback(42, 42, menu_id, buttons[0]["callback_data"])
        [answer] = await fake_tg.wait_for("answerCallbackQuery", timeout=TIMEOUT)
        assert answer.params["callback_query_id"] == "cbq-1"
        replies = await fake_tg.wait_for("sendMessage", count=2, timeout=TIMEOUT)
        assert replies[1].params["text"] == "got 3: yes"

        fake_tg.callback(42, 42, menu_id, buttons[1]["callback_data"])
        replies = await fake_tg.wait_for("sendMessage", count=3, timeout=TIMEOUT)
        assert replies[2].params["text"] == f"got 200: {LONG_VALUE}"

    async with running(config):  # same state dir: the stored payload survives the restart
        fake_tg.callback(42, 42, menu_id, buttons[1]["callback_data"])
        replies = await fake_tg.wait_for("sendMessage", count=4, timeout=TIMEOUT)
    assert replies[3].params["text"] == f"got 200: {LONG_VALUE}"
    answers = fake_tg.calls_of("answerCallbackQuery")
    assert [a.params["callback_query_id"] for a in answers] == ["cbq-1", "cbq-2", "cbq-3"]
    assert fake_llm.requests == []  # the python agent answered everything


LABEL_AGENT = """
def agent(turn):
    if turn.text == "menu":
        return {"blocks": [{"type": "buttons", "buttons": [
            {"label": "Short"},
            {"label": "Deploy the release candidate to every production region right now, please"},
        ]}]}
    return "chose: " + turn.text
"""


async def test_label_only_buttons_fit_callback_data_and_resolve_to_the_label(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A button without a value sends its label back; a long label must still fit 64 bytes."""
    config = python_agent_config(
        tmp_path, monkeypatch, fake_tg, fake_llm, module="tg_label_agent", source=LABEL_AGENT
    )
    long_label = "Deploy the release candidate to every production region right now, please"
    assert len(long_label.encode()) > 64
    async with running(config):
        fake_tg.dm(42, "menu")
        [menu] = await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        short, long = _keyboard(menu.params)
        assert short["callback_data"] == "Short"
        assert len(long["callback_data"].encode()) <= 64
        fake_tg.callback(42, 42, fake_tg.sent[0]["message_id"], long["callback_data"])
        replies = await fake_tg.wait_for("sendMessage", count=2, timeout=TIMEOUT)
    assert replies[1].params["text"] == f"chose: {long_label}"


async def test_button_press_in_a_group_with_a_numeric_query_id_is_answered_cleanly(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    """Real callback query ids are long digit strings; they are not message ids to quote."""
    config = telegram_config(tmp_path, fake_tg, fake_llm)
    async with running(config):
        fake_tg.group_message(GROUP, 7, "menu please", mention=True)
        await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        menu = fake_tg.sent[0]
        query = {
            "id": "4382398457284593021",
            "from": {"id": 7, "is_bot": False, "first_name": "Alice"},
            "chat_instance": "-77",
            "data": "yes",
            "message": menu,
        }
        fake_tg.enqueue({"callback_query": query})
        [answer] = await fake_tg.wait_for("answerCallbackQuery", timeout=TIMEOUT)
        replies = await fake_tg.wait_for("sendMessage", count=2, timeout=TIMEOUT)
    assert answer.params["callback_query_id"] == "4382398457284593021"
    reply = replies[1].params
    assert reply["text"] == "echo: yes"
    quoted = reply.get("reply_parameters", {}).get("message_id")
    assert quoted in (None, menu["message_id"])  # never the query id read as a message id
