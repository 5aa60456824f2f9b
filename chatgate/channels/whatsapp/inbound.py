"""Normalise WhatsApp Cloud API webhook posts into InboundMessages, delivery receipts, or a
recorded reason to ignore an event. Pure: the payload is the JSON Meta posted, already verified.

A phone number is a DM: chat and sender are the user's wa_id. Button and list replies carry
the pressed id as `choice`; locations and shared contacts become readable text; a media
message becomes a placeholder that keeps its Graph media id (in `extra["media"]`), so fetching
it later is local to this channel. Reactions never start a turn.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from chatgate.channels.whatsapp import texts
from chatgate.model.messages import Attachment, InboundMessage, Target
from chatgate.model.reasons import DropReason
from chatgate.policies.reactions import reaction_text

PLATFORM = "whatsapp"
MEDIA_KINDS = ("image", "audio", "video", "document", "sticker")
RECEIPT_STATUSES = ("sent", "delivered", "read", "failed")
_SYSTEM_TYPES = frozenset({"system", "request_welcome", "ephemeral"})

REACTION = "reaction"  # InboundMessage.extra key: the emoji of a reaction


@dataclass(frozen=True)
class Ignored:
    reason: DropReason
    chat_id: str = ""


@dataclass(frozen=True)
class Receipt:
    """A status callback: what became of a message we sent."""

    message_id: str
    status: str
    at: float
    recipient: str
    code: int | None = None
    error: str = ""


Event = InboundMessage | Receipt | Ignored


def events(payload: Any, channel: str, phone_number_id: str | None) -> Iterator[Event]:
    """Every message, receipt and ignored event in one webhook post, in order; never raises."""
    if not isinstance(payload, Mapping) or payload.get("object") != "whatsapp_business_account":
        yield Ignored(DropReason.MALFORMED_UPDATE)
        return
    for entry in _maps(payload.get("entry")):
        for change in _maps(entry.get("changes")):
            value = _map(change.get("value"))
            if change.get("field") != "messages":
                yield Ignored(DropReason.SYSTEM_MESSAGE)
                continue
            metadata = _map(value.get("metadata"))
            ours = str(metadata.get("phone_number_id") or "")
            if phone_number_id and ours != phone_number_id:
                yield Ignored(DropReason.OTHER_RECIPIENT)
                continue
            names = {
                str(c.get("wa_id")): str(_map(c.get("profile")).get("name") or "")
                for c in _maps(value.get("contacts"))
            }
            me = str(metadata.get("display_phone_number") or "")
            for message in _maps(value.get("messages")):
                yield _guarded(message, channel, names, me)
            for status in _maps(value.get("statuses")):
                yield receipt(status)


def _guarded(message: Mapping[str, Any], channel: str, names: Mapping[str, str], me: str) -> Event:
    try:
        return normalize(message, channel, names, me)
    except (AttributeError, TypeError, ValueError, KeyError):
        return Ignored(DropReason.MALFORMED_UPDATE, str(message.get("from") or ""))


def normalize(
    message: Mapping[str, Any], channel: str, names: Mapping[str, str], me: str = ""
) -> InboundMessage | Ignored:
    """One entry of `value.messages`."""
    sender, wamid = str(message.get("from") or ""), str(message.get("id") or "")
    kind = str(message.get("type") or "")
    if not sender or not wamid:
        return Ignored(DropReason.MALFORMED_UPDATE, sender)
    if me and _digits(sender) == _digits(me):
        return Ignored(DropReason.SELF_MESSAGE, sender)
    if kind == "reaction":
        return _reaction(message, channel, names, sender, wamid)
    if kind in _SYSTEM_TYPES:
        return Ignored(DropReason.SYSTEM_MESSAGE, sender)
    choice = _choice(message, kind)
    media = _media(message, kind)
    text = choice if choice is not None else _text(message, kind, media)
    if text is None:
        return Ignored(DropReason.UNSUPPORTED_INTERACTION, sender)
    if not text.strip():
        return Ignored(DropReason.EMPTY_INPUT, sender)
    return _message(message, channel, names, text, choice, media)


def _message(
    message: Mapping[str, Any],
    channel: str,
    names: Mapping[str, str],
    text: str,
    choice: str | None,
    media: Mapping[str, Any] | None,
) -> InboundMessage:
    sender, wamid = str(message["from"]), str(message["id"])
    context = _map(message.get("context"))
    extra: dict[str, Any] = {"media": [media]} if media else {}
    return InboundMessage(
        channel=channel,
        platform=PLATFORM,
        chat_id=sender,
        chat_kind="direct",
        sender_id=sender,
        message_id=wamid,
        text=text,
        sender_name=names.get(sender, ""),
        is_mention=True,  # every message to a business number addresses it
        is_command=choice is None and text.startswith("/"),
        reply_to=str(context["id"]) if context.get("id") else None,
        attachments=(_attachment(media),) if media else (),
        received_at=_stamp(message.get("timestamp")),
        choice=choice,
        # the reply quotes this message (when configured); typing and read receipts need its id
        reply_target=Target(channel, sender, None, wamid),
        extra=extra,
    )


def _reaction(
    message: Mapping[str, Any], channel: str, names: Mapping[str, str], sender: str, wamid: str
) -> InboundMessage | Ignored:
    """A reaction as a message naming the emoji and the message it reacts to; the adapter
    decides (by the channel's `reactions` and whether that message is ours) what it becomes.
    Removing a reaction (an empty emoji) is never input."""
    reaction = _map(message.get("reaction"))
    emoji, reacted = str(reaction.get("emoji") or ""), str(reaction.get("message_id") or "")
    if not emoji or not reacted:
        return Ignored(DropReason.REACTION_IGNORED, sender)
    return InboundMessage(
        channel=channel,
        platform=PLATFORM,
        chat_id=sender,
        chat_kind="direct",
        sender_id=sender,
        message_id=wamid,
        text=reaction_text(emoji),
        sender_name=names.get(sender, ""),
        is_mention=True,
        reply_to=reacted,
        received_at=_stamp(message.get("timestamp")),
        reply_target=Target(channel, sender, None, None),
        extra={REACTION: emoji},
    )


def receipt(status: Mapping[str, Any]) -> Receipt | Ignored:
    """One entry of `value.statuses`; a failure keeps Meta's first error code and words."""
    wamid, state = str(status.get("id") or ""), str(status.get("status") or "")
    recipient = str(status.get("recipient_id") or "")
    if not wamid or state not in RECEIPT_STATUSES:
        return Ignored(DropReason.MALFORMED_UPDATE, recipient)
    code: int | None = None
    error = ""
    for item in _maps(status.get("errors"))[:1]:
        raw = item.get("code")
        code = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
        details = str(_map(item.get("error_data")).get("details") or "")
        error = " — ".join(
            p for p in (str(item.get("title") or item.get("message") or ""), details) if p
        )
    return Receipt(wamid, state, _stamp(status.get("timestamp")), recipient, code, error[:500])


def _choice(message: Mapping[str, Any], kind: str) -> str | None:
    """The id behind a pressed reply button or list row (or a template's quick reply)."""
    if kind == "interactive":
        interactive = _map(message.get("interactive"))
        picked = _map(interactive.get(str(interactive.get("type") or "")))
        if interactive.get("type") in ("button_reply", "list_reply"):
            return str(picked.get("id") or picked.get("title") or "")
        return None
    if kind == "button":
        button = _map(message.get("button"))
        return str(button.get("payload") or button.get("text") or "")
    return None


def _text(message: Mapping[str, Any], kind: str, media: Mapping[str, Any] | None) -> str | None:
    if kind == "text":
        return str(_map(message.get("text")).get("body") or "")
    if media is not None:
        caption = str(media.get("caption") or "").strip()
        return caption or texts.MEDIA_PLACEHOLDER.format(kind=_attachment(media).kind)
    if kind == "location":
        return _location(_map(message.get("location")))
    if kind == "contacts":
        shared = [_contact(c) for c in _maps(message.get("contacts"))]
        return "\n".join(shared) if shared else ""
    return None  # unsupported (polls, orders, flows...) and unknown types


def _attachment(media: Mapping[str, Any]) -> Attachment:
    """A media reference as an attachment fetched later by its Graph media id."""
    mime = media.get("mime_type")
    return Attachment(_kind(media), None, media.get("filename"), mime, None, media["id"])


def _media(message: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    """The Graph media reference of an image/audio/video/document/sticker message."""
    if kind not in MEDIA_KINDS:
        return None
    body = _map(message.get(kind))
    ref: dict[str, Any] = {"kind": kind, "id": str(body.get("id") or "")}
    for key in ("mime_type", "sha256", "caption", "filename"):
        if body.get(key):
            ref[key] = str(body[key])
    if body.get("voice") is True:
        ref["voice"] = True
    return ref


def _kind(media: Mapping[str, Any]) -> str:
    """A voice note is audio Meta marks `voice` (recorded in the app): the kind "voice"."""
    return "voice" if media.get("voice") else str(media["kind"])


def _location(location: Mapping[str, Any]) -> str:
    lat, lon = _coordinate(location.get("latitude")), _coordinate(location.get("longitude"))
    place = ", ".join(str(location[k]) for k in ("name", "address") if location.get(k))
    return texts.LOCATION.format(place=f"{place}, " if place else "", lat=lat, lon=lon)


def _contact(contact: Mapping[str, Any]) -> str:
    name = str(_map(contact.get("name")).get("formatted_name") or "") or texts.UNNAMED_CONTACT
    details = [str(p.get("phone") or p.get("wa_id") or "") for p in _maps(contact.get("phones"))]
    details += [str(e.get("email") or "") for e in _maps(contact.get("emails"))]
    details = [d for d in details if d]
    shown = texts.CONTACT_DETAIL.format(name=name, details=", ".join(details)) if details else name
    return texts.CONTACT.format(name=shown)


def _coordinate(value: Any) -> str:
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits
        raise ValueError("coordinate is out of range") from None
    if not math.isfinite(number):
        raise ValueError("coordinate is not a number")
    return f"{number:.6f}".rstrip("0").rstrip(".")


def _stamp(value: Any) -> float:
    try:
        stamp = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return stamp if math.isfinite(stamp) and stamp > 0 else 0.0


def _digits(phone: str) -> str:
    return phone if phone.isdigit() else "".join(filter(str.isdigit, phone))


def _map(value: Any) -> Mapping[str, Any]:
    # A parsed post holds dicts: the plain type check spares the Mapping ABC's on every field.
    return value if isinstance(value, (dict, Mapping)) else {}


def _maps(value: Any) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, (dict, Mapping))]
