"""Files into Teams personal chats by the file-consent flow: the bot may not attach bytes there
itself, so it asks.

1. A FileConsentCard (name, size, description) whose accept/decline context names the file in
   the outgoing-file store and the chat it was offered in.
2. The user presses Allow: Teams sends a `fileConsent/invoke` with an `uploadInfo` (a OneDrive
   upload session URL), answered 200 at once.
3. The bytes go to `uploadUrl` (PUT, in Content-Range pieces, without the bot token).
4. A FileInfoCard pointing at the uploaded file is posted into the chat.

Declined or done, the stored file is removed. Group chats and channels get the download link.
The card and context shapes are pure functions over the SDK's models; the upload is I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp

from chatgate.model.outbound import File

CONSENT_TYPE = "application/vnd.microsoft.teams.card.file.consent"
INFO_TYPE = "application/vnd.microsoft.teams.card.file.info"
INVOKE_NAME = "fileConsent/invoke"
PIECE_BYTES = 12 * 327_680  # OneDrive upload sessions take pieces in multiples of 320 KiB
CONTEXT_KEY = "chatgate_file"


@dataclass(frozen=True)
class Offer:
    """What the card's context carries back: the stored file, and where it was offered."""

    ref: str
    name: str
    chat_id: str

    def context(self) -> dict[str, Any]:
        return {CONTEXT_KEY: {"ref": self.ref, "name": self.name, "chat": self.chat_id}}


@dataclass(frozen=True)
class Answer:
    """A press on a consent card: accepted (with where to upload) or declined."""

    offer: Offer
    accepted: bool
    card_id: str = ""  # the consent card's activity (replaced by the outcome once answered)
    upload_url: str = ""
    content_url: str = ""
    name: str = ""
    unique_id: str = ""
    file_type: str = ""


def consent_card(file: File, size: int, offer: Offer) -> dict[str, Any]:
    """The message activity asking the user to accept the file."""
    from microsoft_teams.api.models.file import FileConsentCard

    card = FileConsentCard(
        description=file.caption or file.name,
        size_in_bytes=size,
        accept_context=offer.context(),
        decline_context=offer.context(),
    )
    content = card.model_dump(by_alias=True, exclude_none=True)
    return {"attachments": [{"contentType": CONSENT_TYPE, "name": file.name, "content": content}]}


def info_card(answer: Answer) -> dict[str, Any]:
    """The message activity showing the uploaded file in the chat."""
    from microsoft_teams.api.models.file import FileInfoCard

    card = FileInfoCard(unique_id=answer.unique_id or None, file_type=answer.file_type or None)
    attachment = {
        "contentType": INFO_TYPE,
        "contentUrl": answer.content_url,
        "name": answer.name or answer.offer.name,
        "content": card.model_dump(by_alias=True, exclude_none=True),
    }
    return {"attachments": [attachment]}


def answer_of(activity: Any) -> Answer | None:
    """The consent card press an invoke activity carries, or None when it is not ours."""
    if getattr(activity, "type", None) != "invoke" or getattr(activity, "name", "") != INVOKE_NAME:
        return None
    value = activity.value
    offer = _offer(value.context)
    if offer is None:
        return None
    info = value.upload_info
    card = str(getattr(activity, "reply_to_id", None) or "")
    if str(getattr(value.action, "value", value.action)) != "accept" or info is None:
        return Answer(offer, False, card)
    return Answer(
        offer,
        True,
        card,
        upload_url=str(info.upload_url or ""),
        content_url=str(info.content_url or ""),
        name=str(info.name or ""),
        unique_id=str(info.unique_id or ""),
        file_type=str(info.file_type or ""),
    )


def _offer(context: Any) -> Offer | None:
    mine = context.get(CONTEXT_KEY) if isinstance(context, dict) else None
    if not isinstance(mine, dict) or not all(isinstance(mine.get(k), str) for k in ("ref", "chat")):
        return None
    return Offer(mine["ref"], str(mine.get("name") or "file"), mine["chat"])


def pieces(size: int, piece: int = PIECE_BYTES) -> list[tuple[int, int]]:
    """The (first, last) byte of each upload piece."""
    return [(start, min(start + piece, size) - 1) for start in range(0, size, piece)] or [(0, -1)]


async def upload(session: aiohttp.ClientSession, url: str, data: bytes) -> None:
    """The bytes into the upload session, piece by piece (no bot token: OneDrive's URL is
    pre-authorised)."""
    total = len(data)
    for first, last in pieces(total):
        headers = {"Content-Range": f"bytes {first}-{last}/{total}"}
        async with session.put(url, data=data[first : last + 1], headers=headers) as response:
            if response.status >= 400:
                raise ConnectionError(f"file upload answered HTTP {response.status}")
