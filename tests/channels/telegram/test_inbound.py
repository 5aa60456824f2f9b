"""Unit tests: Telegram updates (parsed by the real PTB) normalised into InboundMessages."""

from __future__ import annotations

import time
from typing import Any

import pytest

from chatgate.channels.telegram.ids import message_key, split_key
from chatgate.channels.telegram.inbound import Ignored
from chatgate.model.reasons import DropReason
from chatgate.policies.routing import session_key
from tests.channels.telegram.helpers_b import inbound, parse
from tests.fakes.telegram import BOT_ID, BOT_USERNAME, FakeTelegram, bot_user

GROUP = -1001234


@pytest.fixture
def fake() -> FakeTelegram:
    """An unstarted fake: only its update builders are used."""
    return FakeTelegram()


def _message(chat: dict[str, Any], text: str, **fields: Any) -> dict[str, Any]:
    body = {
        "message_id": 501,
        "date": int(time.time()),
        "chat": chat,
        "from": {"id": 7, "is_bot": False, "first_name": "Bob"},
        "text": text,
    }
    body.update(fields)
    return {"update_id": 1, "message": body}


SUPERGROUP = {"id": GROUP, "type": "supergroup", "title": "Team"}


# -- chat kinds and ids ------------------------------------------------------------------------


def test_private_chat_is_direct_with_chat_scoped_message_id(fake: FakeTelegram) -> None:
    msg = inbound(fake.dm(42, "hello", first_name="Grace"))
    assert msg.chat_kind == "direct"
    assert (msg.chat_id, msg.sender_id, msg.sender_name) == ("42", "42", "Grace")
    assert msg.message_id == "42:10001"
    assert msg.key == "telegram:42:10001"
    assert msg.text == "hello"
    assert msg.reply_target is not None and msg.reply_target.reply_to is None  # no quote in DMs


@pytest.mark.parametrize(("native", "kind"), [("group", "group"), ("supergroup", "group")])
def test_groups_and_supergroups_are_groups(fake: FakeTelegram, native: str, kind: str) -> None:
    msg = inbound(fake.group_message(GROUP, 7, "hi all", chat_type=native))
    assert msg.chat_kind == kind
    assert msg.message_id == f"{GROUP}:10001"
    assert msg.reply_target is not None
    assert msg.reply_target.reply_to == msg.message_id  # groups quote the trigger


def test_channel_post_is_a_channel_from_the_sender_chat() -> None:
    chat = {"id": -100777, "type": "channel", "title": "News"}
    update = {
        "update_id": 9,
        "channel_post": {
            "message_id": 12,
            "date": int(time.time()),
            "chat": chat,
            "sender_chat": chat,
            "text": "release 1.2 is out",
        },
    }
    msg = inbound(update)
    assert msg.chat_kind == "channel"
    assert (msg.chat_id, msg.sender_id, msg.sender_name) == ("-100777", "-100777", "News")
    assert msg.message_id == "-100777:12"


def test_message_ids_are_scoped_by_chat(fake: FakeTelegram) -> None:
    """Telegram numbers messages per chat: the same number in two chats must not collide."""
    first = inbound(fake.dm(42, "a"))
    second = inbound(fake.dm(43, "b"))
    assert first.message_id.split(":")[1] == second.message_id.split(":")[1]
    assert first.key != second.key


# -- forum topics ------------------------------------------------------------------------------


def test_forum_topic_becomes_the_thread_and_its_own_session(fake: FakeTelegram) -> None:
    in_topic = inbound(fake.group_message(GROUP, 7, "deploy?", mention=True, thread_id=77))
    other_topic = inbound(fake.group_message(GROUP, 7, "lunch?", mention=True, thread_id=78))
    general = inbound(fake.group_message(GROUP, 7, "hi", mention=True))
    assert in_topic.thread_id == "77"
    assert in_topic.reply_target is not None and in_topic.reply_target.thread_id == "77"
    assert general.thread_id is None
    keys = {session_key("default", m, per_user_in_groups=False) for m in (in_topic, other_topic)}
    keys.add(session_key("default", general, per_user_in_groups=False))
    assert len(keys) == 3
    assert session_key("default", in_topic, per_user_in_groups=False).endswith(f"{GROUP}:77")


def test_reply_thread_id_outside_a_topic_is_not_a_thread() -> None:
    """Plain supergroups carry message_thread_id on replies; that is not a forum topic."""
    update = _message(SUPERGROUP, "+1", message_thread_id=400)
    assert inbound(update).thread_id is None


# -- addressing the bot --------------------------------------------------------------------------


def test_unaddressed_group_message_is_not_a_mention(fake: FakeTelegram) -> None:
    msg = inbound(fake.group_message(GROUP, 7, "just chatting"))
    assert (msg.is_mention, msg.is_command) == (False, False)


def test_mention_entity_addresses_the_bot_and_is_stripped(fake: FakeTelegram) -> None:
    msg = inbound(fake.group_message(GROUP, 7, "what's the weather?", mention=True))
    assert msg.is_mention
    assert msg.text == "what's the weather?"


def test_mention_is_case_insensitive_and_found_mid_text() -> None:
    text = f"hey @{BOT_USERNAME.upper()} ping"
    entity = {"type": "mention", "offset": 4, "length": len(BOT_USERNAME) + 1}
    msg = inbound(_message(SUPERGROUP, text, entities=[entity]))
    assert msg.is_mention
    assert msg.text == text


def test_mention_of_someone_else_is_not_for_us() -> None:
    handle = f"@{BOT_USERNAME}2"  # a longer name sharing our prefix
    text = f"{handle} can you help?"
    entity = {"type": "mention", "offset": 0, "length": len(handle)}
    msg = inbound(_message(SUPERGROUP, text, entities=[entity]))
    assert not msg.is_mention
    assert msg.text == text  # our handle is a prefix of theirs: nothing may be stripped


def test_mention_offsets_are_utf16_units() -> None:
    text = f"🎉🎉 @{BOT_USERNAME} hi"  # each emoji is 2 UTF-16 units
    entity = {"type": "mention", "offset": 5, "length": len(BOT_USERNAME) + 1}
    assert inbound(_message(SUPERGROUP, text, entities=[entity])).is_mention


def test_text_mention_of_the_bot_user(fake: FakeTelegram) -> None:
    msg = inbound(fake.group_message(GROUP, 7, "please summarise", text_mention=True))
    assert msg.is_mention


def test_text_mention_of_another_user_is_not_for_us() -> None:
    other = {"id": 999, "is_bot": False, "first_name": "Carol"}
    entity = {"type": "text_mention", "offset": 0, "length": 5, "user": other}
    assert not inbound(_message(SUPERGROUP, "Carol look", entities=[entity])).is_mention


def test_reply_to_the_bot_is_a_mention(fake: FakeTelegram) -> None:
    msg = inbound(fake.group_message(GROUP, 7, "and tomorrow?", reply_to_bot=True))
    assert msg.is_mention
    assert msg.reply_to == f"{GROUP}:1"


def test_reply_to_another_user_is_not_a_mention() -> None:
    original = {
        "message_id": 300,
        "date": int(time.time()),
        "chat": SUPERGROUP,
        "from": {"id": 8, "is_bot": False, "first_name": "Dan"},
        "text": "lunch?",
    }
    msg = inbound(_message(SUPERGROUP, "yes", reply_to_message=original))
    assert not msg.is_mention
    assert msg.reply_to == f"{GROUP}:300"


def test_command_addressed_to_us_is_a_command_and_a_mention(fake: FakeTelegram) -> None:
    msg = inbound(fake.command(GROUP, 7, "/new", chat_type="supergroup", addressed=True))
    assert (msg.is_command, msg.is_mention) == (True, True)
    assert msg.text == f"/new@{BOT_USERNAME}"


def test_bare_command_is_a_command(fake: FakeTelegram) -> None:
    msg = inbound(fake.command(42, 42, "/help"))
    assert msg.is_command
    assert msg.text == "/help"


def test_command_for_another_bot_is_not_ours() -> None:
    text = "/stop@other_helper_bot now"
    entity = {"type": "bot_command", "offset": 0, "length": len("/stop@other_helper_bot")}
    msg = inbound(_message(SUPERGROUP, text, entities=[entity]))
    assert (msg.is_command, msg.is_mention) == (False, False)


# -- content -----------------------------------------------------------------------------------


def test_caption_is_used_as_text_and_the_photo_listed(fake: FakeTelegram) -> None:
    msg = inbound(fake.caption_message(42, "what plant is this?"))
    assert msg.text == "what plant is this?"
    assert [a.kind for a in msg.attachments] == ["image"]
    assert msg.attachments[0].handle == "ph42-800"  # the largest size


def test_a_voice_note_carries_its_file_id_type_size_and_length(fake: FakeTelegram) -> None:
    voice = {"file_id": "vo", "file_unique_id": "u", "duration": 7, "mime_type": "audio/ogg"}
    msg = inbound(fake.media_message(42, "voice", voice | {"file_size": 5120}))
    assert msg.text == "[voice]"
    [att] = msg.attachments
    assert (att.kind, att.handle, att.mime, att.size, att.duration_s) == (
        "voice",
        "vo",
        "audio/ogg",
        5120,
        7.0,
    )


def test_caption_entities_address_the_bot() -> None:
    caption = f"@{BOT_USERNAME} is this ok?"
    fields: dict[str, Any] = {
        "photo": [{"file_id": "p", "file_unique_id": "u", "width": 9, "height": 9}],
        "caption": caption,
        "caption_entities": [{"type": "mention", "offset": 0, "length": len(BOT_USERNAME) + 1}],
    }
    update = _message(SUPERGROUP, "", **fields)
    del update["message"]["text"]
    msg = inbound(update)
    assert msg.is_mention
    assert msg.text == "is this ok?"


def test_photo_without_caption_gets_a_placeholder_text() -> None:
    update = _message(
        {"id": 42, "type": "private", "first_name": "A"},
        "",
        photo=[{"file_id": "p", "file_unique_id": "u", "width": 9, "height": 9}],
    )
    del update["message"]["text"]
    assert inbound(update).text == "[image]"


def test_empty_message_is_ignored_with_a_reason() -> None:
    update = _message({"id": 42, "type": "private", "first_name": "A"}, "")
    del update["message"]["text"]
    result = parse(update)
    assert result == Ignored(DropReason.EMPTY_INPUT, "42")


# -- ignored updates --------------------------------------------------------------------------


def test_edited_message_is_ignored_as_edited(fake: FakeTelegram) -> None:
    fake.dm(42, "original")
    result = parse(fake.edited(42, 42, "changed my mind"))
    assert result == Ignored(DropReason.EDITED_IGNORED, "42")


def test_edited_channel_post_is_ignored_as_edited() -> None:
    chat = {"id": -100777, "type": "channel", "title": "News"}
    post = {"message_id": 3, "date": int(time.time()), "edit_date": int(time.time())}
    update = {"update_id": 5, "edited_channel_post": {**post, "chat": chat, "text": "v2"}}
    assert parse(update) == Ignored(DropReason.EDITED_IGNORED, "-100777")


def test_the_bots_own_messages_are_ignored() -> None:
    update = _message(SUPERGROUP, "echo: hi", **{"from": bot_user()})
    assert parse(update) == Ignored(DropReason.SELF_MESSAGE, str(GROUP))


def test_other_bots_are_flagged_but_not_ignored(fake: FakeTelegram) -> None:
    msg = inbound(fake.group_message(GROUP, 555, "beep", is_bot=True, mention=True))
    assert msg.sender_is_bot
    assert msg.sender_id == "555" != str(BOT_ID)


ANONYMOUS_ADMIN = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}


def test_anonymous_admin_speaks_for_the_group_and_is_not_a_bot() -> None:
    """Telegram puts a placeholder bot in `from` when an admin posts as the group."""
    msg = inbound(
        _message(SUPERGROUP, "hello", sender_chat=SUPERGROUP, **{"from": ANONYMOUS_ADMIN})
    )
    assert (msg.sender_id, msg.sender_name, msg.sender_is_bot) == (str(GROUP), "Team", False)


def test_linked_channel_post_in_a_discussion_group_is_from_the_channel() -> None:
    channel = {"id": -100777, "type": "channel", "title": "News"}
    telegram = {"id": 777000, "is_bot": False, "first_name": "Telegram"}
    msg = inbound(_message(SUPERGROUP, "new post", sender_chat=channel, **{"from": telegram}))
    assert (msg.sender_id, msg.sender_name, msg.sender_is_bot) == ("-100777", "News", False)


# -- button presses ----------------------------------------------------------------------------


def test_callback_query_becomes_a_choice_addressed_to_the_bot(fake: FakeTelegram) -> None:
    msg = inbound(fake.callback(42, 42, 3, "yes"))
    assert msg.choice == msg.text == "yes"
    assert msg.is_mention
    assert msg.message_id == "cb:cbq-1"
    assert msg.reply_to == "42:3"
    assert msg.extra["callback_query_id"] == "cbq-1"


def test_bare_mention_keeps_its_text(fake: FakeTelegram) -> None:
    """Stripping the handle from a lone "@bot" must not hand the agent an empty message."""
    msg = inbound(fake.group_message(GROUP, 7, "", mention=True))
    assert msg.is_mention
    assert msg.text.strip() == f"@{BOT_USERNAME}"


def test_message_keys_split_back_only_when_both_parts_are_numeric() -> None:
    assert split_key(message_key(-1001234, 77)) == ("-1001234", 77)
    assert split_key("42:10001") == ("42", 10001)
    assert split_key("cb:4382398457284593021") is None  # a button press, not a message
    assert split_key("cb:cbq-1") is None
    assert split_key("10001") is None
