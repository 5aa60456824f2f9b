"""Discord API v10 objects, ids, limits and error bodies, shaped the way discord.py 2.7 parses them.

Shared by the fake's REST side (``discord.py``) and gateway side (``discord_gateway.py``). Every
builder emits the fields discord.py reads with ``data[...]`` (it crashes on a missing one), not
the whole Discord schema.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from aiohttp import web

JSONDict = dict[str, Any]

API_PREFIX: Final = "/api/v10"
GATEWAY_URL: Final = "wss://gateway.discord.gg"
RESUME_GATEWAY_URL: Final = "wss://gateway.discord.gg/"
# Every host discord.py 2.7 dials: REST, gateway, CDN (assets/attachments), media proxy (stickers).
DISCORD_HOSTS: Final = (
    "discord.com",
    "gateway.discord.gg",
    "cdn.discordapp.com",
    "media.discordapp.net",
)
CDN_HOSTS: Final = frozenset({"cdn.discordapp.com", "media.discordapp.net"})

DISCORD_EPOCH_MS: Final = 1_420_070_400_000
_BASE_MS: Final = 1_735_689_600_000  # 2025-01-01: fixed ids get realistic creation times


def snowflake_at(unix_ms: int, increment: int = 0) -> int:
    """A snowflake created at `unix_ms`. Shard routing uses ``(id >> 22) % shards``."""
    return ((unix_ms - DISCORD_EPOCH_MS) << 22) | (increment & 0x3F_FFFF)


def snowflake_time(snowflake: int) -> datetime:
    return datetime.fromtimestamp(((snowflake >> 22) + DISCORD_EPOCH_MS) / 1000, UTC)


def iso(snowflake: int) -> str:
    return snowflake_time(snowflake).isoformat()


TOKEN: Final = "MTAwMDAwMDAwMDAwMDAwMDAw.FakeGw.chatgate-test-token-0123456789"
BOT_ID: Final = snowflake_at(_BASE_MS, 1)
APP_ID: Final = BOT_ID  # a bot user shares its application's id
OWNER_ID: Final = snowflake_at(_BASE_MS, 2)
USER_ID: Final = snowflake_at(_BASE_MS, 3)
GUILD_ID: Final = snowflake_at(_BASE_MS, 10)  # even timestamp: shard 0 of 2
OTHER_GUILD_ID: Final = snowflake_at(_BASE_MS + 1, 10)  # odd timestamp: shard 1 of 2
TEXT_CHANNEL_ID: Final = snowflake_at(_BASE_MS, 20)
THREAD_ID: Final = snowflake_at(_BASE_MS, 21)
FORUM_ID: Final = snowflake_at(_BASE_MS, 22)
FORUM_POST_ID: Final = snowflake_at(_BASE_MS, 23)
DM_CHANNEL_ID: Final = snowflake_at(_BASE_MS, 30)

# Channel types (discord.enums.ChannelType values).
DM: Final = 1
GUILD_TEXT: Final = 0
PUBLIC_THREAD: Final = 11
PRIVATE_THREAD: Final = 12
GUILD_FORUM: Final = 15
THREAD_TYPES: Final = frozenset({10, PUBLIC_THREAD, PRIVATE_THREAD})

GUILDS_INTENT: Final = 1 << 0
PRIVILEGED_INTENTS: Final = (1 << 1) | (1 << 8) | (1 << 15)  # members, presences, message_content
LOADING_FLAG: Final = 1 << 7
MAX_CONTENT: Final = 2000
MAX_ACTION_ROWS: Final = 5
MAX_CUSTOM_ID: Final = 100


class Snowflakes:
    """Unique, increasing, time-based ids (so discord.py's ``created_at`` is about now)."""

    def __init__(self) -> None:
        self._last = 0

    def next(self) -> int:
        self._last = max(snowflake_at(int(time.time() * 1000)), self._last + 1)
        return self._last


class ApiError(Exception):
    """A Discord error answer: HTTP status plus the JSON ``{"message", "code"[, "errors"]}``."""

    def __init__(self, status: int, code: int, message: str, errors: JSONDict | None = None):
        super().__init__(f"{status} {code} {message}")
        self.status, self.code, self.message, self.errors = status, code, message, errors

    def body(self) -> JSONDict:
        body: JSONDict = {"message": self.message, "code": self.code}
        if self.errors:
            body["errors"] = self.errors
        return body


def invalid_form(path: str, code: str, message: str) -> ApiError:
    """400/50035 with the nested ``errors`` tree discord.py flattens into ``"In path: message"``."""
    tree: JSONDict = {"_errors": [{"code": code, "message": message}]}
    for key in reversed(path.split(".")):
        tree = {key: tree}
    return ApiError(400, 50035, "Invalid Form Body", tree)


UNKNOWN_CHANNEL: Final = (404, 10003, "Unknown Channel")
UNKNOWN_MESSAGE: Final = (404, 10008, "Unknown Message")
UNKNOWN_WEBHOOK: Final = (404, 10015, "Unknown Webhook")
UNKNOWN_INTERACTION: Final = (404, 10062, "Unknown interaction")
MISSING_ACCESS: Final = (403, 50001, "Missing Access")
MISSING_PERMISSIONS: Final = (403, 50013, "Missing Permissions")
UNAUTHORIZED: Final = (401, 0, "401: Unauthorized")


def json_response(
    status: int, payload: Any, headers: Mapping[str, str] | None = None
) -> web.Response:
    """Content-Type exactly ``application/json``: discord.py treats anything else as text."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    return web.Response(status=status, body=body, content_type="application/json", headers=headers)


def user(
    user_id: int, username: str | None = None, *, bot: bool = False, global_name: str | None = None
) -> JSONDict:
    name = username or f"user{user_id % 10_000}"
    return {
        "id": str(user_id),
        "username": name,
        "discriminator": "0",
        "global_name": global_name if global_name is not None else name.title(),
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
    }


def bot_user(username: str = "chatgate-bot") -> JSONDict:
    return {**user(BOT_ID, username, bot=True), "verified": True, "flags": 0, "mfa_enabled": False}


def member(user_payload: JSONDict | None = None, *, joined_at: str | None = None) -> JSONDict:
    """A guild member; with `user_payload` it is the GUILD_CREATE/interaction shape."""
    data: JSONDict = {
        "roles": [],
        "joined_at": joined_at or iso(GUILD_ID),
        "deaf": False,
        "mute": False,
        "flags": 0,
        "pending": False,
    }
    if user_payload is not None:
        data["user"] = user_payload
    return data


def everyone_role(guild_id: int) -> JSONDict:
    return {"id": str(guild_id), "name": "@everyone", "permissions": "1071698660929", "position": 0}


def guild_channel(
    channel_id: int,
    guild_id: int,
    name: str,
    *,
    channel_type: int = GUILD_TEXT,
    position: int = 0,
    parent_id: int | None = None,
) -> JSONDict:
    """A text (0) or forum (15) channel; discord.py requires name and position."""
    return {
        "id": str(channel_id),
        "type": channel_type,
        "guild_id": str(guild_id),
        "name": name,
        "position": position,
        "parent_id": str(parent_id) if parent_id else None,
        "permission_overwrites": [],
        "nsfw": False,
        "rate_limit_per_user": 0,
        "last_message_id": None,
        "topic": None,
        "flags": 0,
        "available_tags": [],
    }


def thread_channel(
    thread_id: int,
    guild_id: int,
    parent_id: int,
    name: str,
    *,
    owner_id: int = USER_ID,
    channel_type: int = PUBLIC_THREAD,
    message_count: int = 0,
) -> JSONDict:
    """A thread (11/12) or forum post (11 under a forum); discord.py requires parent_id,
    owner_id, message_count, member_count and thread_metadata with archived,
    auto_archive_duration and archive_timestamp."""
    return {
        "id": str(thread_id),
        "type": channel_type,
        "guild_id": str(guild_id),
        "parent_id": str(parent_id),
        "owner_id": str(owner_id),
        "name": name,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "message_count": message_count,
        "member_count": 1,
        "total_message_sent": message_count,
        "flags": 0,
        "applied_tags": [],
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 1440,
            "archive_timestamp": iso(thread_id),
            "locked": False,
            "create_timestamp": iso(thread_id),
        },
    }


def dm_channel(channel_id: int, recipient: JSONDict) -> JSONDict:
    return {"id": str(channel_id), "type": DM, "last_message_id": None, "recipients": [recipient]}


def message(
    message_id: int,
    channel_id: int,
    author: JSONDict,
    content: str,
    *,
    guild_id: int | None = None,
    **fields: Any,
) -> JSONDict:
    """A full Message object; `fields` override or add keys (embeds, components, flags ...)."""
    data: JSONDict = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "type": 0,
        "content": content,
        "author": author,
        "timestamp": iso(message_id),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "components": [],
        "pinned": False,
        "flags": 0,
    }
    if guild_id is not None:
        data["guild_id"] = str(guild_id)
    data.update(fields)
    return data


def attachment(
    attachment_id: int, channel_id: int, filename: str, size: int, mime: str
) -> JSONDict:
    url = f"https://cdn.discordapp.com/attachments/{channel_id}/{attachment_id}/{filename}"
    return {
        "id": str(attachment_id),
        "filename": filename,
        "size": size,
        "url": url,
        "proxy_url": url.replace("cdn.discordapp.com", "media.discordapp.net"),
        "content_type": mime,
    }


def stub(data: JSONDict) -> JSONDict:
    """A message as embedded in another one (Discord nests a reply target only one level)."""
    return {k: v for k, v in data.items() if k != "referenced_message"}


# --- validation: the subset of Discord's form checks an adapter is likely to trip ----------------


def _check_length(value: Any, limit: int, path: str) -> None:
    if isinstance(value, str) and len(value) > limit:
        raise invalid_form(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")


def _check_components(rows: Any) -> None:
    if not isinstance(rows, list):
        return
    if len(rows) > MAX_ACTION_ROWS:
        raise invalid_form(
            "components",
            "BASE_TYPE_BAD_LENGTH",
            f"Must be between 1 and {MAX_ACTION_ROWS} in length.",
        )
    seen: set[str] = set()
    for r, row in enumerate(rows):
        children = row.get("components", []) if isinstance(row, dict) else []
        if len(children) > 5:
            path = f"components.{r}.components"
            raise invalid_form(path, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
        for c, child in enumerate(children):
            path = f"components.{r}.components.{c}"
            custom_id = child.get("custom_id")
            _check_length(custom_id, MAX_CUSTOM_ID, f"{path}.custom_id")
            _check_length(child.get("label"), 80, f"{path}.label")
            if custom_id is not None and custom_id in seen:
                raise invalid_form(
                    f"{path}.custom_id",
                    "COMPONENT_CUSTOM_ID_DUPLICATED",
                    "Component custom id cannot be duplicated",
                )
            seen.add(custom_id)


def validate_message(body: JSONDict, *, edit: bool = False, files: int = 0) -> None:
    """Raise ApiError like Discord for oversize content/embeds/components or an empty message."""
    _check_length(body.get("content"), MAX_CONTENT, "content")
    embeds = body.get("embeds")
    if isinstance(embeds, list):
        if len(embeds) > 10:
            raise invalid_form("embeds", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
        for i, embed in enumerate(embeds):
            _check_length(embed.get("title"), 256, f"embeds.{i}.title")
            _check_length(embed.get("description"), 4096, f"embeds.{i}.description")
    _check_components(body.get("components"))
    if edit:
        return
    parts = ("content", "embeds", "components", "sticker_ids", "poll", "attachments")
    if not files and not any(body.get(key) for key in parts):
        raise ApiError(400, 50006, "Cannot send an empty message")


def mention_users(ids: Iterable[int], guild_id: int | None) -> list[JSONDict]:
    """The ``mentions`` array: users, with a ``member`` key in guilds."""
    result = []
    for user_id in ids:
        mentioned = bot_user() if user_id == BOT_ID else user(user_id)
        if guild_id is not None:
            mentioned["member"] = member()
        result.append(mentioned)
    return result


_tokens = itertools.count(1)


def interaction_token() -> str:
    """An opaque interaction/webhook token (Discord's are ~200 chars of base64)."""
    return f"aW50ZXJhY3Rpb246ZmFrZQ-{next(_tokens):06d}-" + "x" * 160
