"""Matrix room events (raw client-server JSON, decrypted already) as InboundMessages.

No I/O: the adapter hands each timeline event with what it knows of the room and the bot.
A DM is its own session; in a room each thread (``rel_type: m.thread``) is one when
`threads: true`. Edits (``m.replace``) and reactions (``m.annotation``) come out tagged for the
gateway's `edits` and the adapter's `reactions` handling; redactions name what they withdraw.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from chatgate.model.messages import Attachment, AttachmentKind, InboundMessage, Target
from chatgate.model.reasons import DropReason
from chatgate.policies.edits import EDIT_MODE, EDIT_OF, RETRACTS, EditMode, edit_wanted
from chatgate.policies.reactions import reaction_text

PLATFORM = "matrix"
REACTION = "reaction"  # InboundMessage.extra key: the emoji of a reaction
ENCRYPTED = "encrypted"  # InboundMessage.extra key: the event arrived encrypted
TEXT_TYPES = frozenset({"m.text", "m.notice", "m.emote"})
MEDIA_KINDS = {
    "m.image": AttachmentKind.IMAGE,
    "m.file": AttachmentKind.DOCUMENT,
    "m.audio": AttachmentKind.AUDIO,
    "m.video": AttachmentKind.VIDEO,
}
VOICE_KEYS = ("org.matrix.msc3245.voice", "org.matrix.msc3245.voice.v2")
_REPLY_FALLBACK = re.compile(r"\A(?:>[^\n]*\n)+\n?")


@dataclass(frozen=True)
class Ignored:
    reason: DropReason
    chat_id: str = ""


@dataclass(frozen=True)
class Me:
    """The bot as others address it."""

    user_id: str
    display_name: str = ""


@dataclass(frozen=True)
class Room:
    """What normalising an event needs to know of its room."""

    room_id: str
    direct: bool
    threads: bool = True


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def relation(content: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(content.get("m.relates_to"))


def _reply_to(rel: Mapping[str, Any]) -> str | None:
    reply = _map(rel.get("m.in_reply_to")).get("event_id")
    return str(reply) if isinstance(reply, str) and reply else None


def thread_of(content: Mapping[str, Any]) -> str | None:
    rel = relation(content)
    root = rel.get("event_id")
    return str(root) if rel.get("rel_type") == "m.thread" and isinstance(root, str) else None


def mentions_me(content: Mapping[str, Any], me: Me) -> bool:
    """Intentional mentions (``m.mentions``), a pill to the bot, or its id or name in the text."""
    users = _map(content.get("m.mentions")).get("user_ids")
    if isinstance(users, list) and me.user_id in users:
        return True
    formatted = str(content.get("formatted_body") or "")
    if f"matrix.to/#/{me.user_id}" in formatted:
        return True
    body = str(content.get("body") or "")
    if me.user_id in body:
        return True
    name = me.display_name.strip()
    return bool(name) and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", body, re.I) is not None


def strip_mention(text: str, me: Me) -> str:
    """The text without the bot's id or display name (and the ``:`` or ``,`` after it)."""
    names = [me.user_id] + ([me.display_name.strip()] if me.display_name.strip() else [])
    for name in names:
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)[:,]?\s*", "", text, flags=re.I)
    return text.strip()


def strip_reply_fallback(body: str) -> str:
    """Older clients quote the replied-to message in `> ` lines before the reply."""
    return _REPLY_FALLBACK.sub("", body, count=1)


def _attachment(content: Mapping[str, Any], room_id: str, event_id: str) -> Attachment | None:
    kind = MEDIA_KINDS.get(str(content.get("msgtype")))
    if kind is None:
        return None
    info = _map(content.get("info"))
    if kind is AttachmentKind.AUDIO and any(k in content for k in VOICE_KEYS):
        kind = AttachmentKind.VOICE
    encrypted = "file" in content
    # An encrypted file's key stays out of the journal: it is read from the event when fetched.
    handle = f"event:{room_id}:{event_id}" if encrypted else str(content.get("url") or "")
    if not handle or (not encrypted and not handle.startswith("mxc://")):
        return None
    size = info.get("size")
    duration = info.get("duration")
    name = content.get("filename") or content.get("body")
    return Attachment(
        kind=kind.value,
        name=str(name) if name else None,
        mime=str(info["mimetype"]) if isinstance(info.get("mimetype"), str) else None,
        size=size if isinstance(size, int) else None,
        handle=handle,
        duration_s=duration / 1000 if isinstance(duration, int | float) else None,
    )


def _base(event: Mapping[str, Any], room: Room, channel: str, text: str) -> InboundMessage:
    content = _map(event.get("content"))
    thread = thread_of(content) if room.threads and not room.direct else None
    event_id = str(event.get("event_id") or "")
    reply_to = _reply_to(relation(content))
    sender = str(event.get("sender") or "")
    return InboundMessage(
        channel=channel,
        platform=PLATFORM,
        chat_id=room.room_id,
        chat_kind="direct" if room.direct else "group",
        sender_id=sender,
        message_id=event_id,
        text=text,
        thread_id=thread,
        is_mention=room.direct,
        is_command=text.lstrip().startswith("/"),
        reply_to=reply_to,
        received_at=_stamp(event.get("origin_server_ts")),
        # Every answer relates to the message it answers (DMs included), in its thread.
        reply_target=Target(channel, room.room_id, thread, event_id),
    )


def _stamp(ts: Any) -> float:
    return ts / 1000.0 if isinstance(ts, int | float) else 0.0


def message(
    event: Mapping[str, Any], room: Room, me: Me, channel: str, edits: EditMode
) -> InboundMessage | Ignored:
    """An ``m.room.message`` (text, notice, emote or a file), an edit of one, or Ignored."""
    content = _map(event.get("content"))
    rel = relation(content)
    if rel.get("rel_type") == "m.replace":
        return _edit(event, room, me, channel, edits)
    msgtype = str(content.get("msgtype") or "")
    event_id = str(event.get("event_id") or "")
    attachment = _attachment(content, room.room_id, event_id)
    if msgtype not in TEXT_TYPES and attachment is None:
        return Ignored(DropReason.EMPTY_INPUT, room.room_id)
    body = strip_reply_fallback(str(content.get("body") or ""))
    if attachment is not None:
        body = "" if body == attachment.name else body  # a file's body is its name
    mention = mentions_me(content, me)
    text = strip_mention(body, me) if mention else body.strip()
    if msgtype == "m.emote":
        text = f"* {text}"
    msg = _base(event, room, channel, text)
    return replace(
        msg,
        is_mention=msg.is_mention or mention,
        attachments=(attachment,) if attachment else (),
    )


def _edit(
    event: Mapping[str, Any], room: Room, me: Me, channel: str, mode: EditMode
) -> InboundMessage | Ignored:
    """An edit as its new content tagged ``edit_of`` the original (its own key per edit)."""
    content = _map(event.get("content"))
    original = str(relation(content).get("event_id") or "")
    new = _map(content.get("m.new_content"))
    if not original or not new:
        return Ignored(DropReason.EDITED_IGNORED, room.room_id)
    changed = message({**event, "content": {**new, "m.relates_to": {}}}, room, me, channel, mode)
    if isinstance(changed, Ignored):
        return changed
    if not edit_wanted(mode, changed.text, changed.is_command):
        return Ignored(DropReason.EDITED_IGNORED, room.room_id)
    version = (
        f"{event.get('event_id')}-{zlib.crc32(changed.text.encode(errors='surrogatepass')):08x}"
    )
    thread = changed.thread_id or (thread_of(content) if room.threads and not room.direct else None)
    return replace(
        changed,
        message_id=f"{original}:edit:{version}",
        thread_id=thread,
        reply_target=Target(channel, room.room_id, thread, original),
        extra={EDIT_OF: f"{channel}:{original}", EDIT_MODE: mode.value},
    )


def reaction(event: Mapping[str, Any], room: Room, channel: str) -> InboundMessage | Ignored:
    """An ``m.reaction`` as a message naming the emoji and the event it reacts to; the adapter
    decides (by `reactions` and whether that event is an answer of ours) what it becomes."""
    rel = relation(_map(event.get("content")))
    emoji, target = str(rel.get("key") or ""), str(rel.get("event_id") or "")
    if rel.get("rel_type") != "m.annotation" or not emoji or not target:
        return Ignored(DropReason.REACTION_IGNORED, room.room_id)
    msg = _base(event, room, channel, reaction_text(emoji))
    return replace(msg, is_mention=True, reply_to=target, extra={REACTION: emoji})


def redaction(event: Mapping[str, Any], room: Room, channel: str) -> InboundMessage | Ignored:
    """A redaction naming the message it withdraws (room versions ≥ 11 put it in content)."""
    redacts = event.get("redacts") or _map(event.get("content")).get("redacts")
    if not isinstance(redacts, str) or not redacts:
        return Ignored(DropReason.MALFORMED_UPDATE, room.room_id)
    msg = _base(event, room, channel, "")
    return replace(msg, is_mention=True, extra={RETRACTS: f"{channel}:{redacts}"})


def normalise(
    event: Mapping[str, Any], room: Room, me: Me, channel: str, edits: EditMode
) -> InboundMessage | Ignored:
    """One decrypted timeline event; the bot's own are Ignored as self messages."""
    if event.get("sender") == me.user_id:
        return Ignored(DropReason.SELF_MESSAGE, room.room_id)
    kind = event.get("type")
    if "state_key" in event:
        return Ignored(DropReason.SYSTEM_MESSAGE, room.room_id)
    if kind == "m.room.message":
        return message(event, room, me, channel, edits)
    if kind == "m.reaction":
        return reaction(event, room, channel)
    if kind == "m.room.redaction":
        return redaction(event, room, channel)
    return Ignored(DropReason.SYSTEM_MESSAGE, room.room_id)
