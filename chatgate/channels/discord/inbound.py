"""Normalise Discord messages and component presses into InboundMessages (or a reason to ignore).

Extraction (`message_facts`, `interaction_facts`) reads discord.py objects by attribute and
decides nothing; `normalize` and `normalize_press` are pure, so every rule is table-tested.
Sessions: a DM is its channel; a guild channel is the chat; a thread (forum posts included) is
its parent channel plus its own thread id, so it keeps a session of its own and is admitted
through its parent's allowlist entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from chatgate.channels.discord.ids import choice_of, interaction_key
from chatgate.channels.discord.media import attachment_of
from chatgate.model.messages import (
    USER_LANGUAGE,
    Attachment,
    InboundMessage,
    Target,
    default_target,
)
from chatgate.model.reasons import DropReason
from chatgate.policies.edits import EDIT_MODE, EDIT_OF, EditMode, edit_wanted
from chatgate.policies.reactions import CONTEXT_ONLY, ReactionMode, reaction_input, reaction_text

PLATFORM = "discord"
REACTION_PREFIX = "rx:"  # a reaction has no message of its own: "rx:<message>:<user>:<emoji>"
REACTION = "reaction"  # InboundMessage.extra key: the emoji of a reaction
_USER_MENTION = re.compile(r"<@!?(\d+)>")
_COMPONENT_INTERACTION = 3


@dataclass(frozen=True)
class BotIdentity:
    id: int
    name: str


@dataclass(frozen=True)
class Ignored:
    reason: DropReason
    chat_id: str = ""


@dataclass(frozen=True)
class Place:
    """Where something happened: the channel it was posted in and, for threads, its parent."""

    channel_id: int
    guild_id: int | None = None
    parent_id: int | None = None  # set only for threads whose parent is known

    @property
    def chat_id(self) -> str:
        return str(self.parent_id or self.channel_id)

    @property
    def thread_id(self) -> str | None:
        return str(self.channel_id) if self.parent_id else None


@dataclass(frozen=True)
class MessageFacts:
    id: int
    place: Place
    author_id: int
    author_name: str
    content: str
    author_is_bot: bool = False
    is_system: bool = False
    mention_ids: tuple[int, ...] = ()
    mention_names: Mapping[int, str] = field(default_factory=dict)
    replied_author_id: int | None = None
    replied_id: int | None = None
    attachments: tuple[Attachment, ...] = ()
    created_at: float = 0.0
    edited_at: float = 0.0


@dataclass(frozen=True)
class ReactionFacts:
    """A reaction added to a message (MESSAGE_REACTION_ADD)."""

    message_id: int
    place: Place
    user_id: int
    emoji: str
    user_is_bot: bool = False
    message_author_id: int | None = None  # Discord names it; None from older gateways


@dataclass(frozen=True)
class PressFacts:
    """A component interaction (button press or select choice)."""

    id: int
    kind: int
    place: Place
    user_id: int
    user_name: str
    custom_id: str = ""
    values: tuple[str, ...] = ()
    user_is_bot: bool = False
    message_id: int | None = None
    created_at: float = 0.0
    locale: str = ""


def normalize(
    facts: MessageFacts, bot: BotIdentity, channel: str, allowed_guilds: frozenset[str]
) -> InboundMessage | Ignored:
    place = facts.place
    if facts.author_id == bot.id:
        return Ignored(DropReason.SELF_MESSAGE, place.chat_id)
    if _guild_refused(place, allowed_guilds):
        return Ignored(DropReason.GUILD_NOT_ALLOWED, place.chat_id)
    if facts.is_system:
        return Ignored(DropReason.SYSTEM_MESSAGE, place.chat_id)
    text = _clean(facts.content, bot.id, facts.mention_names).strip()
    if not text and not facts.attachments:
        return Ignored(DropReason.EMPTY_INPUT, place.chat_id)
    mentioned = bot.id in facts.mention_ids or facts.replied_author_id == bot.id
    msg = _in_place(
        channel,
        place,
        facts.author_id,
        str(facts.id),
        text or f"[{facts.attachments[0].kind}]",
        {},
        sender_name=facts.author_name,
        sender_is_bot=facts.author_is_bot,
        is_mention=mentioned,
        is_command=text.startswith("/"),
        reply_to=str(facts.replied_id) if facts.replied_id else None,
        attachments=facts.attachments,
        received_at=facts.created_at,
    )
    return replace(msg, reply_target=default_target(msg))


def normalize_edit(
    facts: MessageFacts,
    bot: BotIdentity,
    channel: str,
    allowed_guilds: frozenset[str],
    mode: EditMode,
) -> InboundMessage | Ignored:
    """An edited message (MESSAGE_UPDATE with an edit time; an embed resolving under a link
    has none) tagged ``edit_of``: its own key per edit, and the answer still quotes the
    message. An edit never replays a command."""
    if mode is EditMode.IGNORE or not facts.edited_at:
        return Ignored(DropReason.EDITED_IGNORED, facts.place.chat_id)
    msg = normalize(facts, bot, channel, allowed_guilds)
    if isinstance(msg, Ignored):
        return msg
    if not edit_wanted(mode, msg.text, msg.is_command):
        return Ignored(DropReason.EDITED_IGNORED, msg.chat_id)
    return replace(
        msg,
        message_id=f"{facts.id}:edit:{facts.edited_at:.3f}",
        received_at=facts.edited_at,
        extra={**msg.extra, EDIT_OF: msg.key, EDIT_MODE: mode.value},
    )


def normalize_reaction(
    facts: ReactionFacts,
    bot: BotIdentity,
    channel: str,
    allowed_guilds: frozenset[str],
    mode: ReactionMode,
    answers: frozenset[int] | set[int] = frozenset(),
) -> InboundMessage | Ignored:
    """A reaction per the channel's `reactions`: only a person's reaction on one of the bot's
    answers counts (Discord names the message's author; ``answers`` holds ids the bot sent,
    for gateways that do not). Another bot's reaction is never input."""
    place = facts.place
    if facts.user_id == bot.id:
        return Ignored(DropReason.SELF_MESSAGE, place.chat_id)
    if _guild_refused(place, allowed_guilds):
        return Ignored(DropReason.GUILD_NOT_ALLOWED, place.chat_id)
    author = facts.message_author_id
    ours = author == bot.id if author is not None else facts.message_id in answers
    decided = reaction_input(mode, facts.emoji, ours, facts.user_is_bot)
    if decided is ReactionMode.IGNORE:
        return Ignored(DropReason.REACTION_IGNORED, place.chat_id)
    extra: dict[str, Any] = {REACTION: facts.emoji}
    if decided is ReactionMode.CONTEXT:
        extra[CONTEXT_ONLY] = True
    return _in_place(
        channel,
        place,
        facts.user_id,
        f"{REACTION_PREFIX}{facts.message_id}:{facts.user_id}:{facts.emoji}",
        reaction_text(facts.emoji),
        extra,
        is_mention=True,
        reply_to=str(facts.message_id),
        reply_target=Target(channel, place.chat_id, place.thread_id),
    )


def normalize_press(
    facts: PressFacts, channel: str, allowed_guilds: frozenset[str]
) -> InboundMessage | Ignored:
    """A press addresses the bot (it pressed the bot's button): always a mention."""
    place = facts.place
    if facts.kind != _COMPONENT_INTERACTION:
        return Ignored(DropReason.UNSUPPORTED_INTERACTION, place.chat_id)
    if _guild_refused(place, allowed_guilds):
        return Ignored(DropReason.GUILD_NOT_ALLOWED, place.chat_id)
    choice = choice_of(facts.custom_id, facts.values)
    if not choice:
        return Ignored(DropReason.EMPTY_INPUT, place.chat_id)
    return _in_place(
        channel,
        place,
        facts.user_id,
        interaction_key(facts.id),
        choice,
        {
            "interaction_id": str(facts.id),
            **({USER_LANGUAGE: facts.locale} if facts.locale else {}),
        },
        sender_name=facts.user_name,
        sender_is_bot=facts.user_is_bot,
        is_mention=True,
        choice=choice,
        reply_to=str(facts.message_id) if facts.message_id else None,
        received_at=facts.created_at,
        reply_target=Target(channel, place.chat_id, place.thread_id),
    )


def _in_place(
    channel: str,
    place: Place,
    sender_id: int,
    message_id: str,
    text: str,
    extra: dict[str, Any],
    **more: Any,
) -> InboundMessage:
    """A message from ``sender_id`` in ``place`` (a DM, or a guild channel or thread)."""
    return InboundMessage(
        channel=channel,
        platform=PLATFORM,
        chat_id=place.chat_id,
        chat_kind="direct" if place.guild_id is None else "group",
        sender_id=str(sender_id),
        message_id=message_id,
        text=text,
        thread_id=place.thread_id,
        extra={**_extra(place), **extra},
        **more,
    )


def _guild_refused(place: Place, allowed: frozenset[str]) -> bool:
    return bool(allowed) and place.guild_id is not None and str(place.guild_id) not in allowed


def _extra(place: Place) -> dict[str, Any]:
    return {"guild_id": str(place.guild_id)} if place.guild_id is not None else {}


def _clean(content: str, bot_id: int, names: Mapping[int, str]) -> str:
    """Drop the bot's own leading mention; other user mentions read as "@name" for the model."""
    lead = _USER_MENTION.match(content.lstrip())
    if lead is not None and int(lead.group(1)) == bot_id:
        rest = content.lstrip()[lead.end() :].lstrip(" ,:")
        content = rest or content  # a bare ping stays a ping

    def name(m: re.Match[str]) -> str:
        known = names.get(int(m.group(1)))
        return f"@{known}" if known else m.group(0)

    return _USER_MENTION.sub(name, content)


# -- extraction from discord.py objects (attribute reads only) ----------------------------------


def place_of(channel: Any, channel_id: int, guild_id: int | None) -> Place:
    """A thread's parent comes from the cached channel (GUILD_CREATE / THREAD_CREATE)."""
    parent = getattr(channel, "parent_id", None) if _is_thread(channel) else None
    return Place(channel_id, guild_id, parent)


def _is_thread(channel: Any) -> bool:
    kind = getattr(getattr(channel, "type", None), "name", "")
    return isinstance(kind, str) and kind.endswith("_thread")


def message_facts(message: Any) -> MessageFacts:
    guild = message.guild
    ref = message.reference
    resolved = getattr(ref, "resolved", None) if ref is not None else None
    replied_author = getattr(getattr(resolved, "author", None), "id", None)
    author = message.author
    return MessageFacts(
        id=message.id,
        place=place_of(message.channel, message.channel.id, guild.id if guild else None),
        author_id=author.id,
        author_name=author.display_name,
        content=message.content or "",
        author_is_bot=bool(author.bot or message.webhook_id),
        is_system=message.is_system(),
        mention_ids=tuple(u.id for u in message.mentions),
        mention_names={u.id: u.display_name for u in message.mentions},
        replied_author_id=replied_author,
        replied_id=ref.message_id if ref is not None else None,
        attachments=tuple(attachment_of(a) for a in message.attachments),
        created_at=message.created_at.timestamp(),
        edited_at=message.edited_at.timestamp() if message.edited_at else 0.0,
    )


def reaction_facts(payload: Any, channel: Any) -> ReactionFacts:
    """From discord.py's RawReactionActionEvent (``channel``: the cached channel, if any)."""
    member = getattr(payload, "member", None)
    return ReactionFacts(
        message_id=payload.message_id,
        place=place_of(channel, payload.channel_id, payload.guild_id),
        user_id=payload.user_id,
        emoji=str(payload.emoji),
        user_is_bot=bool(getattr(member, "bot", False)),
        message_author_id=getattr(payload, "message_author_id", None),
    )


def press_facts(interaction: Any) -> PressFacts:
    data = interaction.data or {}
    message = interaction.message
    return PressFacts(
        id=interaction.id,
        kind=int(interaction.type.value),
        place=place_of(interaction.channel, interaction.channel_id or 0, interaction.guild_id),
        user_id=interaction.user.id,
        user_name=interaction.user.display_name,
        custom_id=str(data.get("custom_id", "")),
        values=tuple(str(v) for v in data.get("values", ()) or ()),
        user_is_bot=bool(interaction.user.bot),
        message_id=message.id if message is not None else None,
        created_at=interaction.created_at.timestamp(),
        locale=str(getattr(interaction, "locale", "") or ""),
    )
