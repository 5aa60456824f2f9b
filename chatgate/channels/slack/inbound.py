"""Normalise Slack events and block actions into InboundMessages (or a reason to ignore them).

Pure: Slack delivers plain JSON, so every rule is table-tested on dicts. Sessions: a DM is its
channel (a thread inside a DM is its own session); in a channel every top-level message starts
a thread (the answer goes there), so a channel conversation is its channel plus its thread_ts.
The same message can arrive twice (a `message` event and an `app_mention`, or a Slack retry):
both get the key `<channel id>:<ts>`, so the journal keeps one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

from chatgate.model.messages import Attachment, ChatKind, InboundMessage, Target
from chatgate.model.reasons import DropReason
from chatgate.policies.edits import EDIT_MODE, EDIT_OF, EditMode, edit_wanted
from chatgate.policies.reactions import CONTEXT_ONLY, ReactionMode, reaction_input, reaction_text

PLATFORM = "slack"
ACTION_PREFIX = "act"
COMMAND_PREFIX = "cmd"
REACTION_PREFIX = "rx"
EDIT_PREFIX = "edit"
REACTION = "reaction"  # InboundMessage.extra key: the emoji name of a reaction
# Subtypes that are not something a person said to the bot.
_SYSTEM_SUBTYPES = frozenset(
    {
        "channel_join",
        "channel_leave",
        "channel_topic",
        "channel_purpose",
        "channel_name",
        "channel_archive",
        "channel_unarchive",
        "group_join",
        "group_leave",
        "group_topic",
        "group_purpose",
        "group_name",
        "group_archive",
        "group_unarchive",
        "pinned_item",
        "unpinned_item",
        "ekm_access_denied",
        "reminder_add",
        "channel_convert_to_private",
        "huddle_thread",
    }
)
_EDIT_SUBTYPES = frozenset({"message_changed", "message_deleted", "message_replied"})
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|([^>]*))?>")
_FILE_KINDS = ("image", "audio", "video")


@dataclass(frozen=True)
class BotIdentity:
    user_id: str  # the bot user (U…): what mentions name
    bot_id: str  # the bot (B…): what its own messages carry
    team_id: str = ""
    name: str = ""


@dataclass(frozen=True)
class Ignored:
    reason: DropReason
    chat_id: str = ""


def message_key(chat_id: str, ts: str) -> str:
    """A Slack message is its channel plus its ts (ts alone is unique only per channel)."""
    return f"{chat_id}:{ts}"


def ts_of(message_id: str) -> str | None:
    """The ts of one of our message ids, or None when it names no message (a button press)."""
    _, _, ts = message_id.rpartition(":")
    return (
        ts if ts and not ts.startswith((ACTION_PREFIX, COMMAND_PREFIX, REACTION_PREFIX)) else None
    )


def chat_kind(channel_type: str | None, channel_id: str) -> ChatKind:
    if channel_type == "im" or (channel_type is None and channel_id.startswith("D")):
        return "direct"
    return "group"


def normalize(
    event: Mapping[str, Any],
    bot: BotIdentity,
    channel: str,
    *,
    engaged: Collection[str] = (),
    edits: EditMode = EditMode.IGNORE,
) -> InboundMessage | Ignored:
    """One `message` or `app_mention` event. `engaged` holds "<channel>:<thread_ts>" of threads
    the bot has answered in: a reply there addresses the bot without naming it."""
    chat_id = str(event.get("channel") or "")
    subtype = event.get("subtype")
    if not chat_id or not event.get("ts"):
        return Ignored(DropReason.MALFORMED_UPDATE, chat_id)
    if subtype == "message_changed" and edits is not EditMode.IGNORE:
        return _edit(event, bot, channel, engaged, edits)
    skipped = _not_for_us(event, bot, chat_id)
    if skipped is not None:
        return skipped
    text = clean_text(str(event.get("text") or ""), bot.user_id).strip()
    files = tuple(_attachment(f) for f in event.get("files") or () if isinstance(f, Mapping))
    if not text and not files:
        return Ignored(DropReason.EMPTY_INPUT, chat_id)
    return _message(event, bot, channel, text, files, engaged)


def _message(
    event: Mapping[str, Any],
    bot: BotIdentity,
    channel: str,
    text: str,
    files: tuple[Attachment, ...],
    engaged: Collection[str],
) -> InboundMessage:
    chat_id, ts = str(event["channel"]), str(event["ts"])
    thread_ts = str(event["thread_ts"]) if event.get("thread_ts") else None
    kind = chat_kind(event.get("channel_type"), chat_id)
    # In a channel the answer starts (or continues) a thread: that thread is the conversation.
    thread_id = thread_ts if kind == "direct" else (thread_ts or ts)
    bot_id = str(event.get("bot_id") or "")
    return InboundMessage(
        channel=channel,
        platform=PLATFORM,
        chat_id=chat_id,
        chat_kind=kind,
        sender_id=str(event.get("user") or "") or bot_id,
        message_id=message_key(chat_id, ts),
        text=text or f"[{files[0].kind}]",
        thread_id=thread_id,
        sender_name=_display_name(_mapping(event.get("user_profile"))),
        sender_is_bot=bool(bot_id) or event.get("subtype") == "bot_message",
        is_mention=_addressed(event, bot, thread_ts, engaged),
        is_command=text.startswith("/"),
        attachments=files,
        received_at=_float(ts),
        reply_target=Target(channel, chat_id, thread_id),
        extra={"team_id": str(event.get("team") or bot.team_id)} if bot.team_id else {},
    )


def _not_for_us(event: Mapping[str, Any], bot: BotIdentity, chat_id: str) -> Ignored | None:
    """Edits and deletions (when not taken as input), system messages and the bot's own."""
    subtype = event.get("subtype")
    if subtype in _EDIT_SUBTYPES:
        return Ignored(DropReason.EDITED_IGNORED, chat_id)
    if subtype in _SYSTEM_SUBTYPES:
        return Ignored(DropReason.SYSTEM_MESSAGE, chat_id)
    user = str(event.get("user") or "")
    bot_id = str(event.get("bot_id") or "")
    if (user and user == bot.user_id) or (bot_id and bot_id == bot.bot_id):
        return Ignored(DropReason.SELF_MESSAGE, chat_id)
    return None


def _addressed(
    event: Mapping[str, Any], bot: BotIdentity, thread_ts: str | None, engaged: Collection[str]
) -> bool:
    """Named, or a reply in a thread the bot started or has answered in."""
    if event.get("type") == "app_mention" or f"<@{bot.user_id}" in str(event.get("text") or ""):
        return True
    if thread_ts is None:
        return False
    in_engaged = f"{event.get('channel')}:{thread_ts}" in engaged
    return event.get("parent_user_id") == bot.user_id or in_engaged


def _display_name(profile: Mapping[str, Any]) -> str:
    return str(profile.get("display_name") or profile.get("real_name") or "")


def _edit(
    event: Mapping[str, Any],
    bot: BotIdentity,
    channel: str,
    engaged: Collection[str],
    mode: EditMode,
) -> InboundMessage | Ignored:
    """A `message_changed` event: the changed message as input tagged ``edit_of`` (its own key
    per edit, stable across Slack's retries). Slack also sends `message_changed` for link
    unfurls and thread bookkeeping, where nobody edited anything: only a changed text counts.
    An edit never replays a command."""
    chat_id = str(event.get("channel") or "")
    inner, before = _mapping(event.get("message")), _mapping(event.get("previous_message"))
    stamp = str(_mapping(inner.get("edited")).get("ts") or "")
    if not stamp or inner.get("subtype") or inner.get("text") == before.get("text", object()):
        return Ignored(DropReason.EDITED_IGNORED, chat_id)
    as_sent = {**inner, "type": "message", "channel": chat_id}
    as_sent["channel_type"] = event.get("channel_type")
    msg = normalize(as_sent, bot, channel, engaged=engaged)
    if isinstance(msg, Ignored):
        return msg
    if not edit_wanted(mode, msg.text, msg.is_command):
        return Ignored(DropReason.EDITED_IGNORED, chat_id)
    ts = str(inner.get("ts") or "")
    return replace(
        msg,
        message_id=message_key(chat_id, f"{EDIT_PREFIX}{stamp}:{ts}"),  # ts_of: the original
        received_at=_float(stamp),
        extra={**msg.extra, EDIT_OF: msg.key, EDIT_MODE: mode.value},
    )


def normalize_reaction(
    event: Mapping[str, Any],
    bot: BotIdentity,
    channel: str,
    mode: ReactionMode,
    answers: Mapping[str, str | None],
    *,
    from_bot: bool = False,
) -> InboundMessage | Ignored:
    """A `reaction_added` event per the channel's `reactions`: only a person's reaction on one
    of the bot's answers counts. `answers` maps the keys of answers this process sent to their
    thread_ts: a channel answer the bot sent before a restart has no known thread (Slack's
    event does not say), so a reaction on it is ignored; in a DM the DM is the conversation."""
    item = _mapping(event.get("item"))
    chat_id, ts = str(item.get("channel") or ""), str(item.get("ts") or "")
    user, emoji = str(event.get("user") or ""), str(event.get("reaction") or "")
    if item.get("type") != "message" or not chat_id or not ts or not user:
        return Ignored(DropReason.REACTION_IGNORED, chat_id)
    if user == bot.user_id:
        return Ignored(DropReason.SELF_MESSAGE, chat_id)
    key, kind = message_key(chat_id, ts), chat_kind(None, chat_id)
    ours = event.get("item_user") == bot.user_id and (key in answers or kind == "direct")
    decided = reaction_input(mode, emoji, ours, from_bot)
    if decided is ReactionMode.IGNORE:
        return Ignored(DropReason.REACTION_IGNORED, chat_id)
    thread_id = answers.get(key)
    stamp = str(event.get("event_ts") or "")
    extra: dict[str, Any] = {REACTION: emoji}
    if decided is ReactionMode.CONTEXT:
        extra[CONTEXT_ONLY] = True
    return InboundMessage(
        channel=channel,
        platform=PLATFORM,
        chat_id=chat_id,
        chat_kind=kind,
        sender_id=user,
        message_id=message_key(chat_id, f"{REACTION_PREFIX}{stamp}-{ts}-{emoji}"),
        text=reaction_text(f":{emoji}:"),
        thread_id=thread_id,
        is_mention=True,
        reply_to=key,
        received_at=_float(stamp),
        reply_target=Target(channel, chat_id, thread_id),
        extra=extra,
    )


def normalize_action(
    payload: Mapping[str, Any], choice: str | None, channel: str
) -> InboundMessage | Ignored:
    """A `block_actions` press on one of the bot's messages: the user's choice, in the
    conversation the message belongs to. A press addresses the bot: always a mention."""
    where, container = _mapping(payload.get("channel")), _mapping(payload.get("container"))
    message, user = _mapping(payload.get("message")), _mapping(payload.get("user"))
    chat_id = str(where.get("id") or container.get("channel_id") or "")
    actions = payload.get("actions") or []
    action = _mapping(actions[0] if actions else None)
    if not chat_id or not user.get("id"):
        return Ignored(DropReason.UNSUPPORTED_INTERACTION, chat_id)
    if not choice:
        return Ignored(DropReason.EMPTY_INPUT, chat_id)
    kind = chat_kind(None, chat_id)
    message_ts, thread_id = _pressed_in(message, container, kind)
    stamp = str(action.get("action_ts") or payload.get("trigger_id") or "")
    return InboundMessage(
        channel=channel,
        platform=PLATFORM,
        chat_id=chat_id,
        chat_kind=kind,
        sender_id=str(user["id"]),
        message_id=message_key(chat_id, f"{ACTION_PREFIX}{stamp}"),
        text=choice,
        thread_id=thread_id,
        sender_name=str(user.get("name") or user.get("username") or ""),
        is_mention=True,
        choice=choice,
        reply_to=message_key(chat_id, message_ts) if message_ts else None,
        received_at=_float(stamp),
        reply_target=Target(channel, chat_id, thread_id),
        extra={"action_id": str(action.get("action_id") or "")},
    )


def _pressed_in(
    message: Mapping[str, Any], container: Mapping[str, Any], kind: ChatKind
) -> tuple[str, str | None]:
    """The pressed message's ts and the thread its conversation is (a DM is its own)."""
    message_ts = str(message.get("ts") or container.get("message_ts") or "")
    thread_ts = message.get("thread_ts") or container.get("thread_ts")
    if thread_ts:
        return message_ts, str(thread_ts)
    return message_ts, None if kind == "direct" else message_ts or None


def normalize_command(
    payload: Mapping[str, Any], channel: str, own_command: str
) -> InboundMessage | Ignored:
    """A slash command: `/chatgate new` (our own command, `own_command`) reads as `/new`, any
    other registered command as itself (`/new`), so the gateway's commands work on Slack,
    where a message starting with "/" never reaches the bot. It addresses the bot."""
    chat_id = str(payload.get("channel_id") or "")
    user = str(payload.get("user_id") or "")
    if not chat_id or not user:
        return Ignored(DropReason.MALFORMED_UPDATE, chat_id)
    command = str(payload.get("command") or "").strip()
    text = str(payload.get("text") or "").strip()
    line = f"/{text}" if command == own_command else f"{command} {text}".strip()
    if line in ("/", ""):
        line = "/help"
    return InboundMessage(
        channel=channel,
        platform=PLATFORM,
        chat_id=chat_id,
        chat_kind=chat_kind(None, chat_id),
        sender_id=user,
        message_id=message_key(chat_id, f"{COMMAND_PREFIX}{payload.get('trigger_id') or ''}"),
        text=line,
        sender_name=str(payload.get("user_name") or ""),
        is_mention=True,
        is_command=True,
        reply_target=Target(channel, chat_id, None),
    )


def clean_text(text: str, bot_user_id: str) -> str:
    """Drop the bot's own leading mention; other mentions read as "@name" (or "@U…") and
    Slack's escapes (&amp; &lt; &gt;) are undone, so the model reads what the user typed."""
    if "<" not in text and "&" not in text:  # no mention, link or escape: as typed
        return text
    lead = _MENTION.match(text.lstrip())
    if lead is not None and lead.group(1) == bot_user_id:
        rest = text.lstrip()[lead.end() :].lstrip(" ,:")
        text = rest or text

    def name(m: re.Match[str]) -> str:
        return f"@{m.group(2) or m.group(1)}"

    text = _MENTION.sub(name, text)
    text = re.sub(r"<(https?://[^|>]+)\|([^>]+)>", r"\2 (\1)", text)
    text = re.sub(r"<(https?://[^|>]+)>", r"\1", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _attachment(file: Mapping[str, Any]) -> Attachment:
    """A shared file, fetched later from ``url_private`` with the bot token (the handle)."""
    mimetype = str(file.get("mimetype") or "")
    kind = mimetype.split("/")[0] if mimetype else ""
    size = file.get("size")
    return Attachment(
        kind if kind in _FILE_KINDS else "document",
        None,
        str(file.get("name") or "") or None,
        mimetype or None,
        size if isinstance(size, int) else None,
        str(file.get("url_private_download") or file.get("url_private") or "") or None,
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _float(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return 0.0
