"""Normalise Telegram updates into InboundMessages (or a recorded reason to ignore them)."""

from __future__ import annotations

import time
import warnings
import zlib
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Literal

from chatgate.channels.telegram.ids import message_key
from chatgate.model.messages import ALBUM_KEY, Attachment, ChatKind, InboundMessage, default_target
from chatgate.model.reasons import DropReason
from chatgate.policies.edits import EDIT_MODE, EDIT_OF, EditMode, edit_wanted
from telegram import Message, MessageEntity, Update
from telegram.warnings import PTBDeprecationWarning

ALLOWED_UPDATES = (
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "callback_query",
)
# What PTB's Update.de_json raises for JSON that is not a valid update (a huge `date` is an
# OSError/OverflowError from datetime): the webhook answers 400 to these.
UPDATE_PARSE_ERRORS = (
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    RecursionError,
    OverflowError,
    OSError,
)
_KINDS: dict[str, ChatKind] = {
    "private": "direct",
    "group": "group",
    "supergroup": "group",
    "channel": "channel",
}


EditPolicy = Literal["ignore", "replace", "new_turn"]


@dataclass(frozen=True)
class BotIdentity:
    id: int
    username: str


@dataclass(frozen=True)
class Ignored:
    reason: DropReason
    chat_id: str = ""


def normalize(
    update: Update, bot: BotIdentity, channel: str, *, edits: EditPolicy = "ignore"
) -> InboundMessage | Ignored:
    """An InboundMessage, or why the update is ignored; never raises.

    PTB accepts updates that break the Bot API's own schema (a message without a chat, a
    non-numeric id); those are recorded as malformed instead of crashing the receive loop.
    """
    try:
        return _normalize(update, bot, channel, edits)
    except (AttributeError, TypeError, ValueError, KeyError, IndexError):
        return Ignored(DropReason.MALFORMED_UPDATE)


def _normalize(
    update: Update, bot: BotIdentity, channel: str, edits: EditPolicy
) -> InboundMessage | Ignored:
    if update.callback_query is not None:
        return _callback(update, bot, channel)
    if update.edited_message is not None or update.edited_channel_post is not None:
        edited = update.edited_message or update.edited_channel_post
        if edited is None or edits == "ignore":
            return Ignored(DropReason.EDITED_IGNORED, str(edited.chat.id) if edited else "")
        return _edit(edited, bot, channel, EditMode(edits))
    message = update.message or update.channel_post
    if message is None:
        return Ignored(DropReason.EMPTY_INPUT)
    return _message(message, bot, channel)


def _edit(
    edited: Message, bot: BotIdentity, channel: str, mode: EditMode
) -> InboundMessage | Ignored:
    """An edited message tagged ``edit_of`` and the channel's mode (its own key per edit,
    stable across redelivery). An edit never replays a command: a text that reads as one is
    ignored."""
    msg = _message(edited, bot, channel)
    if isinstance(msg, Ignored):
        return msg
    if not edit_wanted(mode, msg.text, msg.is_command):
        return Ignored(DropReason.EDITED_IGNORED, msg.chat_id)
    stamp = int(edited.edit_date.timestamp()) if edited.edit_date else 0
    version = f"{stamp}-{zlib.crc32(msg.text.encode(errors='surrogatepass')):08x}"
    return replace(
        msg,
        message_id=f"{msg.message_id}:edit:{version}",
        extra={**msg.extra, EDIT_OF: msg.key, EDIT_MODE: mode.value},
        received_at=float(stamp) or msg.received_at,
    )


def _message(message: Message, bot: BotIdentity, channel: str) -> InboundMessage | Ignored:
    chat_id = str(message.chat.id)
    sender = message.from_user
    if sender is not None and sender.id == bot.id:
        return Ignored(DropReason.SELF_MESSAGE, chat_id)
    text = message.text or message.caption or ""
    entities = message.entities if message.text else message.caption_entities
    attachments = _attachments(message)
    if not text.strip() and not attachments:
        return Ignored(DropReason.EMPTY_INPUT, chat_id)
    command, addressed_elsewhere = _command(text, entities, bot)
    mentioned = _mentioned(message, text, entities, bot)
    kind = _KINDS.get(message.chat.type, "group")
    sender_id, name, is_bot = _sender(message, chat_id)
    msg = InboundMessage(
        channel=channel,
        platform="telegram",
        chat_id=chat_id,
        chat_kind=kind,
        sender_id=sender_id,
        message_id=message_key(chat_id, message.message_id),
        text=_strip_leading_mention(text, bot)
        or (f"[{attachments[0].kind}]" if attachments else ""),
        thread_id=_topic(message),
        sender_name=name,
        sender_is_bot=is_bot,
        is_mention=mentioned,
        is_command=command and not addressed_elsewhere,
        reply_to=_replied_to(message, chat_id),
        attachments=attachments,
        received_at=message.date.timestamp() if message.date else time.time(),
        extra=_language(message)
        | ({ALBUM_KEY: message.media_group_id} if message.media_group_id else {}),
    )
    return _targeted(msg)


def _topic(message: Message) -> str | None:
    """The forum topic a message is in (its conversation); None outside forum topics."""
    if message.is_topic_message and message.message_thread_id:
        return str(message.message_thread_id)
    return None


def _replied_to(message: Message, chat_id: str) -> str | None:
    replied = message.reply_to_message
    return message_key(chat_id, replied.message_id) if replied else None


def _language(message: Message) -> dict[str, str]:
    """The sender's app language (IETF tag), which picks the language of our texts."""
    user = message.from_user
    code = user.language_code if user is not None and message.sender_chat is None else None
    return {"language": code} if code else {}


def _sender(message: Message, chat_id: str) -> tuple[str, str, bool]:
    """(id, name, is a bot). A message sent on behalf of a chat (anonymous admin, linked
    channel) names that chat in sender_chat; its `from` is then only a placeholder user."""
    if message.sender_chat is not None:
        return str(message.sender_chat.id), message.sender_chat.title or "", False
    sender = message.from_user
    if sender is not None:
        return str(sender.id), sender.full_name, sender.is_bot
    return chat_id, "", False


def _callback(update: Update, bot: BotIdentity, channel: str) -> InboundMessage | Ignored:
    query = update.callback_query
    assert query is not None
    origin = query.message
    if origin is None or query.data is None:
        return Ignored(DropReason.EMPTY_INPUT)
    chat = origin.chat
    chat_id = str(chat.id)
    thread = (
        getattr(origin, "message_thread_id", None)
        if getattr(origin, "is_topic_message", False)
        else None
    )
    msg = InboundMessage(
        channel=channel,
        platform="telegram",
        chat_id=chat_id,
        chat_kind=_KINDS.get(chat.type, "group"),
        sender_id=str(query.from_user.id),
        message_id=f"cb:{query.id}",
        text=query.data,
        thread_id=str(thread) if thread else None,
        sender_name=query.from_user.full_name,
        sender_is_bot=query.from_user.is_bot,
        is_mention=True,  # pressing the bot's button addresses the bot
        choice=query.data,
        reply_to=message_key(chat_id, origin.message_id),
        received_at=time.time(),
        extra={"callback_query_id": query.id},
    )
    return _targeted(msg)


def _targeted(msg: InboundMessage) -> InboundMessage:
    from dataclasses import replace

    return replace(msg, reply_target=default_target(msg))


def _command(text: str, entities: tuple[MessageEntity, ...], bot: BotIdentity) -> tuple[bool, bool]:
    """(is a command, addressed to another bot)."""
    for entity in entities:
        if entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            word = _slice(text, entity)
            target = word.partition("@")[2]
            return True, bool(target) and target.lower() != bot.username.lower()
    return False, False


def _mentioned(
    message: Message, text: str, entities: tuple[MessageEntity, ...], bot: BotIdentity
) -> bool:
    handle = "@" + bot.username.lower()
    for entity in entities:
        if entity.type == MessageEntity.MENTION and _slice(text, entity).lower() == handle:
            return True
        if (
            entity.type == MessageEntity.TEXT_MENTION
            and entity.user is not None
            and entity.user.id == bot.id
        ):
            return True
        if entity.type == MessageEntity.BOT_COMMAND and _slice(text, entity).lower().endswith(
            handle
        ):
            return True
    reply = message.reply_to_message
    return bool(reply and reply.from_user and reply.from_user.id == bot.id)


def _slice(text: str, entity: MessageEntity) -> str:
    """Entity offsets are in UTF-16 code units."""
    encoded = text.encode("utf-16-le")
    return encoded[entity.offset * 2 : (entity.offset + entity.length) * 2].decode(
        "utf-16-le", errors="replace"
    )


def _strip_leading_mention(text: str, bot: BotIdentity) -> str:
    handle = "@" + bot.username
    after = text[len(handle) : len(handle) + 1]
    ends_handle = not (after.isalnum() or after == "_")  # "@ourbot2" is someone else
    if text[: len(handle)].lower() == handle.lower() and ends_handle:
        return text[len(handle) :].lstrip(" ,:") or text  # a bare ping stays a ping
    return text


def _attachments(message: Message) -> tuple[Attachment, ...]:
    """The message's files by ``file_id`` (fetched later with getFile); of a photo's sizes,
    the largest. (An animation also arrives as ``document``.)"""
    found = []
    if message.photo:
        best = message.photo[-1]
        found.append(Attachment("image", None, None, "image/jpeg", best.file_size, best.file_id))
    for field, kind in _FILE_FIELDS:
        media = getattr(message, field, None)
        if media is None:
            continue
        mime = getattr(media, "mime_type", None) or _STICKER_MIME.get(field)
        name = getattr(media, "file_name", None)
        with warnings.catch_warnings():  # PTB 22 warns that `duration` becomes a timedelta
            warnings.simplefilter("ignore", PTBDeprecationWarning)
            seconds = _seconds(getattr(media, "duration", None))
        found.append(Attachment(kind, None, name, mime, media.file_size, media.file_id, seconds))
    return tuple(found)


def _seconds(duration: object) -> float | None:
    """A media duration as seconds (PTB gives an int or a timedelta, by version)."""
    if isinstance(duration, timedelta):
        return duration.total_seconds()
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        return float(duration)
    return None


_FILE_FIELDS = (
    ("document", "document"),
    ("voice", "voice"),
    ("audio", "audio"),
    ("video", "video"),
    ("video_note", "video"),
    ("sticker", "sticker"),
)
_STICKER_MIME = {"sticker": "image/webp"}
