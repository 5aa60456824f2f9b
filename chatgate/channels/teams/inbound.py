"""Normalise verified Teams activities (the SDK's typed models) into InboundMessages, a
conversation reference for later sends, or a recorded reason to ignore the activity.

`personal` is a DM; each thread of a `channel` (root message and replies) is its own session
and addresses the bot only with an @mention, whose `<at>` tag is cut from the text;
`groupChat` is a group. An Adaptive Card `Action.Submit` comes back as a message whose `value`
carries the pressed choice. Pure: no I/O.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

from chatgate.channels.teams import ids
from chatgate.model.messages import Attachment, ChatKind, InboundMessage, Target
from chatgate.model.reasons import DropReason
from chatgate.policies.edits import EDIT_MODE, EDIT_OF, EditMode, edit_wanted

PLATFORM = "teams"
CHOICE_KEY = "chatgate_choice"  # the Action.Submit data key (and the choice set's input id)
CHAT_KINDS: Mapping[str, ChatKind] = {
    "personal": "direct",
    "groupChat": "group",
    "channel": "channel",
}
FILE_DOWNLOAD = "application/vnd.microsoft.teams.file.download.info"
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Ignored:
    reason: DropReason
    chat_id: str = ""


@dataclass(frozen=True)
class Reference:
    """What a later (proactive) send needs: where the conversation's connector lives."""

    chat_id: str
    conversation: str
    service_url: str
    tenant_id: str
    kind: str = ""  # personal, groupChat or channel ("" in references saved before)

    def personal(self) -> bool:
        """A one-to-one chat with the bot (personal conversation ids start `a:`)."""
        return self.kind == "personal" if self.kind else self.conversation.startswith("a:")

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "service_url": self.service_url,
            "tenant_id": self.tenant_id,
            "kind": self.kind,
        }


def tenant_of(activity: Any) -> str:
    data = activity.channel_data
    tenant = getattr(getattr(data, "tenant", None), "id", None)
    return str(tenant or activity.conversation.tenant_id or "").lower()


def tenant_allowed(tenants: Collection[str], tenant: str) -> bool:
    """An empty list takes every tenant (a multi-tenant bot without a list)."""
    return not tenants or tenant in tenants


def reference(activity: Any) -> Reference:
    base, _ = ids.split_thread(activity.conversation.id)
    kind = str(activity.conversation.conversation_type or "")
    service = str(activity.service_url or "")
    return Reference(ids.chat_id(base), base, service, tenant_of(activity), kind)


def normalize(
    activity: Any, channel: str, edits: EditMode = EditMode.IGNORE
) -> InboundMessage | Ignored:
    """One verified activity of any type."""
    kind = activity.type
    base, thread = ids.split_thread(activity.conversation.id)
    chat = ids.chat_id(base)
    if kind == "conversationUpdate" or kind == "installationUpdate":
        return Ignored(DropReason.CONVERSATION_UPDATE, chat)
    if kind == "messageUpdate":
        return _edit(activity, channel, edits, chat)
    if kind == "messageDelete":
        return Ignored(DropReason.EDITED_IGNORED, chat)
    if kind != "message":
        return Ignored(DropReason.UNSUPPORTED_INTERACTION, chat)
    return message(activity, channel, chat, thread)


def message(activity: Any, channel: str, chat: str, thread: str | None) -> InboundMessage | Ignored:
    refused = _refused(activity, chat)
    if refused is not None:
        return refused
    sender = activity.from_
    bot = _bot_id(activity)
    kind = CHAT_KINDS.get(str(activity.conversation.conversation_type or "personal"), "group")
    choice = _choice(activity.value)
    text = choice if choice is not None else _text(activity.text or "", activity.entities, bot)
    attachments = _attachments(activity.attachments)
    if not text.strip() and not attachments:
        return Ignored(DropReason.EMPTY_INPUT, chat)
    thread = thread if kind == "channel" else None
    return InboundMessage(
        channel=channel,
        platform=PLATFORM,
        chat_id=chat,
        chat_kind=kind,
        sender_id=str(sender.aad_object_id or sender.id).lower(),
        message_id=ids.message_key(chat, activity.id),
        text=text,
        thread_id=thread,
        sender_name=sender.name or "",
        sender_is_bot=(sender.role or "") == "bot",
        is_mention=kind == "direct" or _mentions_bot(activity.entities, bot),
        is_command=choice is None and text.startswith("/"),
        reply_to=activity.reply_to_id,
        attachments=attachments,
        received_at=_stamp(activity),
        choice=choice,
        reply_target=Target(channel, chat, thread, activity.id),
        extra={"language": activity.locale} if activity.locale else {},
    )


def _bot_id(activity: Any) -> str:
    return str(activity.recipient.id) if activity.recipient else ""


def _refused(activity: Any, chat: str) -> Ignored | None:
    """Why an activity is no input at all: no id or sender, or the bot's own message."""
    sender = activity.from_
    if not activity.id or not sender or not sender.id:
        return Ignored(DropReason.MALFORMED_UPDATE, chat)
    if sender.id == _bot_id(activity):
        return Ignored(DropReason.SELF_MESSAGE, chat)
    return None


def _stamp(activity: Any) -> float:
    return float(activity.timestamp.timestamp()) if activity.timestamp else 0.0


def _edit(activity: Any, channel: str, mode: EditMode, chat: str) -> InboundMessage | Ignored:
    """An edited message: the new text as input tagged `edit_of` (its own key per edit)."""
    if mode is EditMode.IGNORE:
        return Ignored(DropReason.EDITED_IGNORED, chat)
    _, thread = ids.split_thread(activity.conversation.id)
    as_sent = activity.model_copy(update={"type": "message"})
    msg = message(as_sent, channel, chat, thread)
    if isinstance(msg, Ignored):
        return msg
    if not edit_wanted(mode, msg.text, msg.is_command):
        return Ignored(DropReason.EDITED_IGNORED, chat)
    stamp = activity.timestamp.timestamp() if activity.timestamp else 0.0
    return replace(
        msg,
        message_id=f"{msg.message_id}/edit/{stamp:.3f}",
        extra={**msg.extra, EDIT_OF: f"{channel}:{msg.message_id}", EDIT_MODE: mode.value},
    )


def _choice(value: Any) -> str | None:
    """The pressed button (or picked option) of one of our Adaptive Cards."""
    if isinstance(value, Mapping) and CHOICE_KEY in value:
        picked = value[CHOICE_KEY]
        return str(picked) if picked is not None else ""
    return None


def _mentions_bot(entities: Any, bot: str) -> bool:
    for entity in entities or ():
        mentioned = getattr(entity, "mentioned", None)
        if getattr(entity, "type", None) == "mention" and getattr(mentioned, "id", None) == bot:
            return True
    return False


def _text(text: str, entities: Any, bot: str) -> str:
    """The message text without the bot's `<at>` mention and without HTML markup."""
    for entity in entities or ():
        mentioned = getattr(entity, "mentioned", None)
        tag = getattr(entity, "text", None)
        if (
            getattr(entity, "type", None) == "mention"
            and tag
            and getattr(mentioned, "id", None) == bot
        ):
            text = text.replace(tag, "")
    return html.unescape(_TAG.sub("", text)).strip()


def _attachments(items: Any) -> tuple[Attachment, ...]:
    """Inline images (fetched later from `contentUrl` with the bot token) and files shared in a
    personal chat (Teams gives a pre-authorised download URL)."""
    found: list[Attachment] = []
    for item in items or ():
        mime = str(item.content_type or "")
        if mime.startswith("image/") and item.content_url:
            found.append(Attachment("image", None, item.name, mime, None, item.content_url))
        elif mime == FILE_DOWNLOAD and isinstance(item.content, Mapping):
            url = item.content.get("downloadUrl")
            kind = str(item.content.get("fileType") or "")
            if url:
                image = kind.lower() in ("png", "jpg", "jpeg", "gif")
                found.append(
                    Attachment("image" if image else "document", None, item.name, None, None, url)
                )
    return tuple(found)
