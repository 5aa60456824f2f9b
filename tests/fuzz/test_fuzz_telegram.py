"""Fuzz the Telegram inbound normaliser with arbitrary update JSON.

Invariant: an update PTB accepts becomes an InboundMessage or a recorded ignore reason, never an
exception (what PTB itself rejects is the webhook's 400).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from telegram import Update

from chatgate.channels.telegram.inbound import (
    UPDATE_PARSE_ERRORS,
    BotIdentity,
    Ignored,
    normalize,
)
from chatgate.model.messages import InboundMessage
from tests.fuzz.conftest import fuzz_settings

BOT = BotIdentity(id=42, username="fuzzbot")

ids = st.integers(min_value=-(2**53), max_value=2**53) | st.sampled_from([0, 42, -100123])
texts = st.text(max_size=60) | st.sampled_from(["/start", "/start@fuzzbot x", "@fuzzbot hi", ""])
anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return strategy | anything


users = st.fixed_dictionaries(
    {"id": maybe(ids), "is_bot": maybe(st.booleans()), "first_name": maybe(texts)},
    optional={"username": maybe(texts)},
)
chats = st.fixed_dictionaries(
    {
        "id": maybe(ids),
        "type": maybe(st.sampled_from(["private", "group", "supergroup", "channel", "odd"])),
    },
    optional={"is_forum": st.booleans(), "title": texts},
)
entities = st.lists(
    st.fixed_dictionaries(
        {
            "type": maybe(st.sampled_from(["bot_command", "mention", "text_mention", "bold"])),
            "offset": maybe(st.integers(min_value=-5, max_value=80)),
            "length": maybe(st.integers(min_value=-5, max_value=80)),
        },
        optional={"user": users},
    ),
    max_size=4,
)
messages = st.fixed_dictionaries(
    {"message_id": maybe(ids), "date": maybe(st.integers(0, 2**33)), "chat": maybe(chats)},
    optional={
        "from": maybe(users),
        "text": maybe(texts),
        "caption": texts,
        "entities": maybe(entities),
        "caption_entities": entities,
        "message_thread_id": ids,
        "is_topic_message": st.booleans(),
        "photo": st.lists(
            st.fixed_dictionaries(
                {"file_id": texts, "file_unique_id": texts, "width": ids, "height": ids}
            ),
            max_size=2,
        ),
        "document": st.fixed_dictionaries({"file_id": texts, "file_unique_id": texts}),
        "reply_to_message": st.fixed_dictionaries(
            {"message_id": ids, "date": st.integers(0, 2**33), "chat": chats}
        ),
    },
)
callbacks = st.fixed_dictionaries(
    {"id": maybe(texts), "from": maybe(users), "chat_instance": maybe(texts)},
    optional={"data": maybe(texts), "message": maybe(messages)},
)
updates = st.fixed_dictionaries(
    {"update_id": maybe(ids)},
    optional={
        "message": maybe(messages),
        "edited_message": maybe(messages),
        "channel_post": messages,
        "edited_channel_post": messages,
        "callback_query": maybe(callbacks),
    },
) | st.dictionaries(st.text(max_size=12), anything, max_size=4)


@fuzz_settings("telegram")
@given(data=updates)
def test_normalise_never_raises(data: dict[str, Any]) -> None:
    try:
        update = Update.de_json(data, None)  # type: ignore[arg-type]
    except UPDATE_PARSE_ERRORS:  # the webhook's 400
        return
    if update is None:
        return
    result = normalize(update, BOT, "telegram")
    assert isinstance(result, InboundMessage | Ignored)
    if isinstance(result, Ignored):
        assert result.reason.value
