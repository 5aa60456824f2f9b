"""The fake Telegram Bot API, exercised by the real python-telegram-bot over loopback."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    MessageEntity,
    ReactionTypeEmoji,
    ReplyParameters,
    Update,
)
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters
from telegram.request import HTTPXRequest

from tests.fakes.telegram import (
    BOT_FIRST_NAME,
    BOT_ID,
    BOT_USERNAME,
    TOKEN,
    FakeTelegram,
    FaultSpec,
    decode_form_value,
)


def _request(read_timeout: float = 3.0) -> HTTPXRequest:
    return HTTPXRequest(connect_timeout=2.0, read_timeout=read_timeout, pool_timeout=2.0)


def _bot(fake: FakeTelegram, token: str = TOKEN) -> Bot:
    return Bot(
        token,
        base_url=fake.base_url,
        base_file_url=fake.base_file_url,
        request=_request(),
        get_updates_request=_request(),
    )


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    async with _bot(fake) as client:
        yield client


# --- plain Bot API roundtrips ---------------------------------------------------------------


async def test_get_me_and_exact_json_content_type(fake: FakeTelegram, bot: Bot) -> None:
    me = await bot.get_me()
    assert (me.id, me.is_bot, me.username) == (BOT_ID, True, BOT_USERNAME)
    assert me.can_join_groups is True
    assert me.can_read_all_group_messages is False
    assert me.supports_inline_queries is False
    url = f"{fake.base_url}{TOKEN}/getMe"
    async with aiohttp.ClientSession() as session, session.post(url) as resp:
        assert resp.headers["Content-Type"] == "application/json"
        assert (await resp.json())["result"]["id"] == BOT_ID
    assert fake.calls_of("getMe")[0].token == TOKEN


async def test_send_message_roundtrip_and_recorded_params(fake: FakeTelegram, bot: Bot) -> None:
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Go", callback_data="go")]])
    first = await bot.send_message(
        42,
        "<b>hi</b>",
        parse_mode="HTML",
        reply_markup=markup,
        reply_parameters=ReplyParameters(message_id=7),
        message_thread_id=3,
    )
    second = await bot.send_message(42, "42")
    group = await bot.send_message(-1001, "to the group")

    assert (first.message_id, second.message_id, group.message_id) == (1, 2, 1)
    assert first.chat.type == "private" and group.chat.type == "supergroup"
    assert first.from_user is not None and first.from_user.id == BOT_ID
    assert first.text == "<b>hi</b>" and second.text == "42"
    assert first.reply_to_message is not None and first.reply_to_message.message_id == 7
    assert first.message_thread_id == 3
    assert first.reply_markup == markup

    call = fake.calls_of("sendMessage")[0]
    assert call.content_type == "application/x-www-form-urlencoded"
    assert call.params["chat_id"] == 42 and call.raw["chat_id"] == "42"
    assert call.params["parse_mode"] == "HTML"
    assert call.params["reply_markup"] == {
        "inline_keyboard": [[{"text": "Go", "callback_data": "go"}]]
    }
    assert call.params["reply_parameters"] == {"message_id": 7}
    assert call.params["message_thread_id"] == 3
    assert fake.calls_of("sendmessage")[1].params["text"] == "42"  # strings stay strings
    assert [m["text"] for m in fake.sent] == ["<b>hi</b>", "42", "to the group"]


async def test_reply_to_a_stored_message_embeds_it(bot: Bot) -> None:
    original = await bot.send_message(42, "question")
    reply = await bot.send_message(42, "answer", reply_parameters=ReplyParameters(original.id))
    assert reply.reply_to_message is not None
    assert reply.reply_to_message.text == "question"


async def test_edit_message_text_updates_the_stored_message(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(42, "draft")
    edited = await bot.edit_message_text("final", chat_id=42, message_id=sent.message_id)
    assert not isinstance(edited, bool)
    assert edited.text == "final" and edited.edit_date is not None
    assert fake.sent[0]["text"] == "final" and "edit_date" in fake.sent[0]
    assert fake.calls_of("editMessageText")[0].params["message_id"] == sent.message_id
    with pytest.raises(BadRequest, match="Message to edit not found"):
        await bot.edit_message_text("x", chat_id=42, message_id=999)


async def test_text_limits_follow_telegram(bot: Bot) -> None:
    assert (await bot.send_message(42, "😀" * 2048)).text == "😀" * 2048  # 4096 UTF-16 units
    with pytest.raises(BadRequest, match="Message is too long"):
        await bot.send_message(42, "😀" * 2048 + "!")
    with pytest.raises(BadRequest, match="Message text is empty"):
        await bot.send_message(42, " ")


async def test_chat_action_and_reaction_are_recorded(fake: FakeTelegram, bot: Bot) -> None:
    assert await bot.send_chat_action(42, "typing") is True
    assert await bot.set_message_reaction(42, 5, ReactionTypeEmoji("👍")) is True
    assert await bot.answer_callback_query("cbq-1", text="ok") is True
    assert fake.calls_of("sendChatAction")[0].params == {"chat_id": 42, "action": "typing"}
    reaction = fake.calls_of("setMessageReaction")[0].params
    assert reaction["reaction"] == [{"emoji": "👍", "type": "emoji"}]
    assert reaction["message_id"] == 5
    assert fake.calls_of("answerCallbackQuery")[0].params["callback_query_id"] == "cbq-1"


async def test_multipart_upload_is_decoded(fake: FakeTelegram, bot: Bot) -> None:
    photo = await bot.send_photo(42, photo=b"\x89PNG fake bytes", caption="look")
    assert photo.caption == "look" and photo.chat.id == 42
    call = fake.calls_of("sendPhoto")[0]
    assert call.content_type == "multipart/form-data"
    assert call.params["chat_id"] == 42
    uploads = [v for v in call.params.values() if isinstance(v, dict) and "data" in v]
    assert [u["data"] for u in uploads] == [b"\x89PNG fake bytes"]


async def test_json_body_and_unknown_paths(fake: FakeTelegram) -> None:
    async with aiohttp.ClientSession() as session:
        url = f"{fake.base_url}{TOKEN}/sendMessage"
        async with session.post(url, json={"chat_id": -5, "text": "json"}) as resp:
            body = await resp.json()
        async with session.get(f"http://127.0.0.1:{fake.port}/nope") as missing:
            assert missing.status == 404
    assert body["ok"] is True and body["result"]["chat"]["type"] == "supergroup"
    call = fake.calls_of("sendMessage")[0]
    assert call.content_type == "application/json" and call.params["chat_id"] == -5


@given(st.text())
def test_text_values_are_never_json_decoded(text: str) -> None:
    assert decode_form_value("text", text) == text


@given(st.integers() | st.booleans() | st.lists(st.integers()))
def test_non_string_values_roundtrip_through_json(value: Any) -> None:
    assert decode_form_value("chat_id", json.dumps(value)) == value


# --- getUpdates long polling ----------------------------------------------------------------


async def test_get_updates_returns_promptly_when_an_update_arrives(
    fake: FakeTelegram, bot: Bot
) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=5))
    await fake.wait_for("getUpdates")
    started = time.monotonic()
    fake.dm(42, "hello")
    updates = await poll
    assert time.monotonic() - started < 1.0
    assert [u.message.text for u in updates if u.message] == ["hello"]
    assert updates[0].update_id == 1000


async def test_get_updates_times_out_empty(fake: FakeTelegram, bot: Bot) -> None:
    started = time.monotonic()
    assert await bot.get_updates(timeout=timedelta(seconds=0.3)) == ()
    assert 0.25 <= time.monotonic() - started < 2.0
    assert fake.get_updates_calls == 1


async def test_offset_confirms_earlier_updates(fake: FakeTelegram, bot: Bot) -> None:
    first, second = fake.dm(1, "a"), fake.dm(2, "b")
    assert (first["update_id"], second["update_id"]) == (1000, 1001)
    assert [u.update_id for u in await bot.get_updates()] == [1000, 1001]
    assert [u.update_id for u in await bot.get_updates(offset=1001)] == [1001]
    assert await bot.get_updates(offset=1002) == ()
    assert await bot.get_updates() == ()  # confirmed updates are gone for good


async def test_update_helpers_parse_through_getupdates(fake: FakeTelegram, bot: Bot) -> None:
    sent = await bot.send_message(-100, "pick one")
    fake.dm(42, "hi", first_name="Bob", username="bob")
    fake.group_message(-100, 7, "hey 👋", mention=True, text_mention=True, reply_to_bot=True)
    fake.group_message(-100, 7, "in topic", thread_id=9)
    fake.command(-100, 7, "new", chat_type="supergroup", addressed=True)
    fake.callback(7, -100, sent.message_id, "choice:1", chat_type="supergroup")
    fake.caption_message(42, "a cat")
    fake.edited(42, 42, "hi (edited)")

    dm, mention, topic, cmd, cb, photo, edit = await bot.get_updates()

    assert dm.message and dm.message.chat.type == "private" and dm.message.text == "hi"
    assert dm.message.from_user and dm.message.from_user.username == "bob"
    msg = mention.message
    assert msg is not None and msg.text == f"@{BOT_USERNAME} {BOT_FIRST_NAME} hey 👋"
    parsed = {e.type: text for e, text in msg.parse_entities().items()}
    assert parsed == {"mention": f"@{BOT_USERNAME}", "text_mention": BOT_FIRST_NAME}
    assert msg.reply_to_message and msg.reply_to_message.text == "pick one"
    assert msg.reply_to_message.from_user and msg.reply_to_message.from_user.id == BOT_ID
    assert topic.message and topic.message.message_thread_id == 9
    assert topic.message.is_topic_message and topic.message.chat.is_forum
    assert cmd.message and cmd.message.text == f"/new@{BOT_USERNAME}"
    assert cmd.message.parse_entities([MessageEntity.BOT_COMMAND]) != {}
    assert cb.callback_query and cb.callback_query.data == "choice:1"
    assert cb.callback_query.message and cb.callback_query.message.message_id == sent.message_id
    assert photo.message and photo.message.caption == "a cat" and photo.message.text is None
    assert photo.message.photo
    assert edit.edited_message and edit.edited_message.text == "hi (edited)"
    assert edit.edited_message.message_id == dm.message.message_id
    assert edit.edited_message.edit_date is not None


def test_helpers_produce_updates_ptb_parses_offline() -> None:
    fake = FakeTelegram()
    update = Update.de_json(fake.command(5, 5, "/start deep-link"), None)
    assert update.message and update.message.text == "/start deep-link"
    assert update.message.entities[0].length == len("/start")
    assert update.effective_chat and update.effective_chat.type == "private"


# --- faults -----------------------------------------------------------------------------------

FAULTS = [
    (FaultSpec(429, "Too Many Requests: retry after 2", retry_after=2), RetryAfter),
    (FaultSpec(403, "Forbidden: bot was blocked by the user"), Forbidden),
    (FaultSpec(400, "Bad Request: chat not found"), BadRequest),
    (FaultSpec(401, "Unauthorized"), InvalidToken),
    (FaultSpec(409, "Conflict: terminated by other getUpdates request"), Conflict),
    (FaultSpec(400, "Bad Request: upgraded", migrate_to_chat_id=-1009), ChatMigrated),
    (FaultSpec(502, "Bad Gateway"), NetworkError),
    (FaultSpec(0, "", drop_connection=True), NetworkError),
]


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
@pytest.mark.parametrize(("spec", "error"), FAULTS)
async def test_fault_maps_to_ptb_exception(
    fake: FakeTelegram, bot: Bot, spec: FaultSpec, error: type[TelegramError]
) -> None:
    fake.fail("sendMessage", spec)
    with pytest.raises(TelegramError) as caught:
        await bot.send_message(42, "hi")
    assert type(caught.value) is error
    if isinstance(caught.value, RetryAfter):
        assert caught.value.retry_after in (2, timedelta(seconds=2))
    if isinstance(caught.value, BadRequest):
        assert caught.value.message in ("Chat not found", "Upgraded")
    if isinstance(caught.value, ChatMigrated):
        assert caught.value.new_chat_id == -1009
    assert (await bot.send_message(42, "again")).text == "again"  # the fault was consumed
    assert len(fake.calls_of("sendMessage")) == 2


async def test_faults_queue_in_order_and_delay(fake: FakeTelegram, bot: Bot) -> None:
    fake.fail("sendChatAction", FaultSpec(403, "Forbidden: bot was blocked by the user"), times=2)
    fake.fail("sendChatAction", FaultSpec(200, "slow", delay_s=0.5))
    for _ in range(2):
        with pytest.raises(Forbidden):
            await bot.send_chat_action(42, "typing")
    with pytest.raises(TimedOut):
        await bot.send_chat_action(42, "typing", read_timeout=0.1)
    assert await bot.send_chat_action(42, "typing") is True


async def test_wrong_and_revoked_tokens_are_unauthorized(fake: FakeTelegram, bot: Bot) -> None:
    wrong = _bot(fake, token="999:wrong")
    with pytest.raises(InvalidToken):
        await wrong.initialize()  # initialize calls getMe
    await wrong.shutdown()
    fake.revoke_token()
    with pytest.raises(InvalidToken):
        await bot.send_message(42, "hi")
    assert fake.calls[-1].token == TOKEN


async def test_conflict_mode_and_webhook_block_polling(fake: FakeTelegram, bot: Bot) -> None:
    fake.conflict = True
    with pytest.raises(Conflict, match="terminated by other getUpdates request"):
        await bot.get_updates()
    fake.conflict = False
    await bot.set_webhook("http://127.0.0.1:9/hook")
    with pytest.raises(Conflict, match="webhook is active"):
        await bot.get_updates()


async def test_refused_connections_are_counted(fake: FakeTelegram, bot: Bot) -> None:
    before = fake.connection_attempts
    fake.refuse_connections = True
    for _ in range(2):
        with pytest.raises(NetworkError) as caught:
            await bot.send_message(42, "hi")
        assert not isinstance(caught.value, TimedOut)
    assert fake.refused_requests == 2
    # The first refusal kills the pooled keep-alive connection, the second a fresh one.
    assert fake.connection_attempts == before + 1
    assert fake.calls_of("sendMessage") == []
    fake.refuse_connections = False
    assert (await bot.send_message(42, "back")).text == "back"
    assert fake.connection_attempts == before + 2


async def test_stalled_get_updates_until_cleared(fake: FakeTelegram, bot: Bot) -> None:
    fake.stall_get_updates = True
    with pytest.raises(TimedOut):
        await bot.get_updates(read_timeout=0.2)
    stalled = asyncio.create_task(bot.get_updates(read_timeout=3))
    await fake.wait_for("getUpdates", 2)
    fake.dm(42, "unblocked")
    assert not stalled.done()
    fake.stall_get_updates = False
    assert [u.message.text for u in await stalled if u.message] == ["unblocked"]


async def test_wait_for_filters_and_reports_on_timeout(fake: FakeTelegram, bot: Bot) -> None:
    waiter = asyncio.create_task(
        fake.wait_for("sendMessage", 2, where=lambda c: c.params["chat_id"] == 1)
    )
    await bot.send_message(1, "a")
    await bot.send_message(2, "b")
    await bot.send_message(1, "c")
    assert [c.params["text"] for c in await waiter] == ["a", "c"]
    with pytest.raises(
        AssertionError, match=r"(?s)expected 1 matching editMessageText.*sendMessage"
    ):
        await fake.wait_for("editMessageText", timeout=0.05)


# --- PTB Application polling and webhooks ---------------------------------------------------


async def test_application_polling_receives_a_dm(fake: FakeTelegram) -> None:
    received: list[str] = []
    arrived = asyncio.Event()

    async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None and update.message.text is not None
        received.append(update.message.text)
        arrived.set()

    app = (
        ApplicationBuilder()
        .token(TOKEN)
        .base_url(fake.base_url)
        .base_file_url(fake.base_file_url)
        .get_updates_read_timeout(3)
        .build()
    )
    app.add_handler(MessageHandler(filters.TEXT, on_text))
    async with app:
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0, timeout=1)
        await app.start()
        fake.dm(42, "hello bot")
        await asyncio.wait_for(arrived.wait(), 5)
        await app.updater.stop()
        await app.stop()
    assert received == ["hello bot"]
    methods = [c.method for c in fake.calls]
    assert methods[:3] == ["getMe", "deleteWebhook", "getUpdates"]
    assert fake.calls_of("getUpdates")[-1].params["offset"] == 1001  # confirmed on stop


async def test_push_webhook_to_a_receiver(fake: FakeTelegram, bot: Bot) -> None:
    seen: list[tuple[str, str | None, Any]] = []

    async def receive(request: web.Request) -> web.Response:
        seen.append(
            (
                request.headers["Content-Type"],
                request.headers.get("X-Telegram-Bot-Api-Secret-Token"),
                await request.json(),
            )
        )
        return web.Response(text="ok")

    receiver = web.Application()
    receiver.router.add_post("/tg", receive)
    runner = web.AppRunner(receiver)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        url = f"http://127.0.0.1:{site.port}/tg"
        await bot.set_webhook(url, secret_token="s3cret")
        assert (fake.webhook_url, fake.webhook_secret) == (url, "s3cret")
        assert (await bot.get_webhook_info()).url == url
        assert await fake.push_webhook({"message": {"text": "x"}}) == 200
        assert await fake.push_webhook({"message": {}}, secret="other") == 200
        assert await fake.push_webhook({"message": {}}, secret=None) == 200
    finally:
        await runner.cleanup()
    assert seen[0] == (
        "application/json",
        "s3cret",
        {"update_id": 1000, "message": {"text": "x"}},
    )
    assert [s[1] for s in seen[1:]] == ["other", None]
    await bot.delete_webhook()
    assert fake.webhook_url is None and fake.webhook_secret is None


async def test_stop_releases_held_requests_promptly() -> None:
    fake = FakeTelegram()
    await fake.start()
    async with _bot(fake) as client:
        long_poll = asyncio.create_task(client.get_updates(timeout=5))
        await fake.wait_for("getUpdates")
        fake.stall_get_updates = True
        stalled = asyncio.create_task(client.get_updates(read_timeout=5))
        await fake.wait_for("getUpdates", 2)
        started = time.monotonic()
        await fake.stop()
        assert await long_poll == ()
        with pytest.raises(NetworkError):
            await stalled
        assert time.monotonic() - started < 1.0
