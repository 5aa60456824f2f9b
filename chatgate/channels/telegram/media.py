"""Telegram attachments: getFile for the file path, then the Bot API file download streamed to
disk (a Telegram file URL carries the bot token and never leaves the adapter)."""

from __future__ import annotations

from pathlib import Path

from chatgate.channels.download import write_bytes
from chatgate.channels.telegram.request import BoundedRequest
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment
from chatgate.model.reasons import MediaReason
from telegram import Bot
from telegram import error as tg


async def fetch_file(bot: Bot, attachment: Attachment, dest: Path, max_bytes: int) -> int:
    if not attachment.handle:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "no file_id")
    try:
        file = await bot.get_file(attachment.handle)
    except tg.BadRequest as exc:
        if "too big" in exc.message.lower():  # "Bad Request: file is too big" (> 20 MB)
            raise FetchError(MediaReason.TOO_LARGE, "over the Bot API's 20 MB") from None
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "getFile refused") from None
    except tg.TelegramError as exc:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, type(exc).__name__) from None
    if file.file_size is not None and file.file_size > max_bytes:
        raise FetchError(MediaReason.TOO_LARGE, f"{file.file_size} bytes")
    if isinstance(bot.request, BoundedRequest) and file.file_path:
        return await bot.request.stream_to(file.file_path, dest, max_bytes)  # never whole in memory
    try:
        data = await file.download_as_bytearray()  # another transport: PTB reads the body whole
    except tg.TelegramError as exc:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, type(exc).__name__) from None
    if len(data) > max_bytes:
        raise FetchError(MediaReason.TOO_LARGE, f"{len(data)} bytes")
    return await write_bytes(dest, data)
