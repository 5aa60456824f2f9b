"""The fake Discord's world (guilds, channels, users, messages, interactions) and the builders
that inject user-side gateway events into it.

The default world has one guild with a text channel, a thread in it, a forum with one post, and
a DM with the user ``USER_ID``; ``add_*`` helpers extend it. Builders store what they create, so
the bot can later reply to, edit around or fetch those messages over REST.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tests.fakes.discord_gateway import GatewayServer
from tests.fakes.discord_payloads import (
    APP_ID,
    BOT_ID,
    DM_CHANNEL_ID,
    FORUM_ID,
    FORUM_POST_ID,
    GUILD_FORUM,
    GUILD_ID,
    OWNER_ID,
    PRIVATE_THREAD,
    PUBLIC_THREAD,
    TEXT_CHANNEL_ID,
    THREAD_ID,
    THREAD_TYPES,
    USER_ID,
    JSONDict,
    Snowflakes,
    attachment,
    bot_user,
    dm_channel,
    everyone_role,
    guild_channel,
    interaction_token,
    iso,
    member,
    mention_users,
    message,
    stub,
    thread_channel,
    user,
)

BUTTON, STRING_SELECT = 2, 3
ALL_PERMISSIONS = "2251799813685247"


@dataclass
class InteractionRecord:
    """An interaction the fake issued (id/token) and how the bot answered it."""

    id: int
    token: str
    channel_id: int
    guild_id: int | None
    message_id: int | None
    payload: JSONDict
    created: float
    response_type: int | None = None
    response_data: JSONDict | None = None
    original_message_id: int | None = None
    followup_ids: list[int] = field(default_factory=list)


class DiscordWorld(GatewayServer):
    """World tables plus user-side event builders; FakeDiscord adds the REST server on top."""

    def __init__(self, *, default_world: bool = True, heartbeat_interval_ms: int) -> None:
        super().__init__(heartbeat_interval_ms=heartbeat_interval_ms)
        self.snowflakes = Snowflakes()
        self.bot_username = "chatgate-bot"
        self.guilds: dict[int, JSONDict] = {}
        self.channels: dict[int, JSONDict] = {}
        self.users: dict[int, JSONDict] = {}
        self.messages: dict[int, JSONDict] = {}
        self.interactions: dict[int, InteractionRecord] = {}
        self.cdn_files: dict[str, bytes] = {}  # CDN path -> bytes (attachments of both sides)
        self._dm_by_user: dict[int, int] = {}
        if default_world:
            self.add_guild(GUILD_ID, "Test Guild")
            self.add_text_channel(TEXT_CHANNEL_ID, name="general")
            self.add_thread(THREAD_ID, TEXT_CHANNEL_ID, name="a-thread")
            self.add_forum(FORUM_ID, name="help")
            self.add_forum_post(FORUM_POST_ID, FORUM_ID, "First post", "How do I start?")
            self.add_dm(DM_CHANNEL_ID, USER_ID)

    # --- world setup -------------------------------------------------------------------------

    def add_user(self, user_id: int, username: str | None = None, *, bot: bool = False) -> JSONDict:
        known = self.users.get(user_id)
        if known is None or (username and known["username"] != username):
            known = self.users[user_id] = user(user_id, username, bot=bot)
        return known

    def add_guild(self, guild_id: int, name: str = "Guild") -> JSONDict:
        """A guild the bot is in; it appears in READY (unavailable) and as GUILD_CREATE."""
        guild = {"id": str(guild_id), "name": name, "owner_id": str(OWNER_ID)}
        self.guilds[guild_id] = guild
        return guild

    def add_text_channel(
        self, channel_id: int, guild_id: int = GUILD_ID, *, name: str = "general"
    ) -> JSONDict:
        return self._add_channel(guild_channel(channel_id, guild_id, name))

    def add_forum(
        self, channel_id: int, guild_id: int = GUILD_ID, *, name: str = "forum"
    ) -> JSONDict:
        return self._add_channel(
            guild_channel(channel_id, guild_id, name, channel_type=GUILD_FORUM)
        )

    def add_thread(
        self,
        thread_id: int,
        parent_id: int,
        *,
        name: str = "thread",
        owner_id: int = USER_ID,
        private: bool = False,
    ) -> JSONDict:
        """A thread under a text channel (or a post under a forum, see add_forum_post)."""
        guild_id = self._require_guild_of(parent_id)
        kind = PRIVATE_THREAD if private else PUBLIC_THREAD
        thread = thread_channel(
            thread_id, guild_id, parent_id, name, owner_id=owner_id, channel_type=kind
        )
        return self._add_channel(thread)

    def add_forum_post(
        self, post_id: int, forum_id: int, title: str, content: str, *, author_id: int = USER_ID
    ) -> JSONDict:
        """A forum post: a thread whose starter message has the thread's id. Returns the message."""
        self.add_thread(post_id, forum_id, name=title, owner_id=author_id)
        self.channels[post_id]["message_count"] = 1
        author, guild_id = self.add_user(author_id), self.guild_of(post_id)
        starter = message(post_id, post_id, author, content, guild_id=guild_id, member=member())
        return self._store(starter)

    def add_dm(self, channel_id: int, user_id: int) -> JSONDict:
        channel = self._add_channel(dm_channel(channel_id, self.add_user(user_id)))
        self._dm_by_user[user_id] = channel_id
        return channel

    def dm_channel_id(self, user_id: int) -> int:
        """The DM channel with `user_id`, opened on first use."""
        if user_id not in self._dm_by_user:
            self.add_dm(self.snowflakes.next(), user_id)
        return self._dm_by_user[user_id]

    def guild_of(self, channel_id: int) -> int | None:
        guild_id = self.channels.get(channel_id, {}).get("guild_id")
        return int(guild_id) if guild_id else None

    # --- user-side gateway events ------------------------------------------------------------

    def message_create(
        self,
        content: str,
        *,
        author_id: int = USER_ID,
        channel_id: int | None = None,
        guild_id: int | None = None,
        mentions: Iterable[int] = (),
        mention_bot: bool = False,
        referenced_message: int | None = None,
        author_bot: bool = False,
        username: str | None = None,
        message_id: int | None = None,
        attachments: Iterable[tuple[str, bytes]] = (),
        embeds: Sequence[JSONDict] = (),
        shard_id: int | None = None,
    ) -> JSONDict:
        """Dispatch MESSAGE_CREATE from a user and return it. No channel and no guild: the DM
        with the author; a known guild channel/thread brings its guild_id; `mention_bot`
        prefixes ``<@BOT_ID>``; `referenced_message` (a stored id) makes it a reply (type 19)."""
        author = self.add_user(author_id, username, bot=author_bot)
        channel_id, guild_id = self._place(channel_id, guild_id, author_id)
        mentioned = list(mentions)
        if mention_bot:
            content, mentioned = f"<@{BOT_ID}> {content}", [BOT_ID, *mentioned]
        mid = message_id or self.snowflakes.next()
        files = [self._upload(channel_id, name, data) for name, data in attachments]
        data = message(
            mid,
            channel_id,
            author,
            content,
            guild_id=guild_id,
            mentions=mention_users(mentioned, guild_id),
            attachments=files,
            embeds=list(embeds),
        )
        if guild_id is not None:
            data["member"] = member()
        if referenced_message is not None:
            data.update(self._reply_fields(channel_id, guild_id, referenced_message))
        self._store(data)
        self.dispatch("MESSAGE_CREATE", data, shard_id=shard_id)
        return data

    def message_update(
        self,
        message_id: int,
        content: str | None = None,
        *,
        embeds: Sequence[JSONDict] | None = None,
        shard_id: int | None = None,
    ) -> JSONDict:
        """Dispatch MESSAGE_UPDATE (a full message, as discord.py 2.7 requires) for a stored one."""
        data = self.messages[message_id]
        if content is not None:
            data["content"] = content
        if embeds is not None:
            data["embeds"] = list(embeds)
        data["edited_timestamp"] = datetime.now(UTC).isoformat()
        self.dispatch("MESSAGE_UPDATE", data, shard_id=shard_id)
        return data

    def message_delete(self, message_id: int, *, shard_id: int | None = None) -> JSONDict:
        data = self.messages.pop(message_id)
        event = {"id": data["id"], "channel_id": data["channel_id"]}
        if "guild_id" in data:
            event["guild_id"] = data["guild_id"]
        self.dispatch("MESSAGE_DELETE", event, shard_id=shard_id)
        return event

    def thread_create(
        self,
        name: str,
        *,
        parent_id: int = TEXT_CHANNEL_ID,
        thread_id: int | None = None,
        owner_id: int = USER_ID,
        private: bool = False,
        starter_content: str = "",
        shard_id: int | None = None,
    ) -> JSONDict:
        """Dispatch THREAD_CREATE (newly_created); under a forum also the starter MESSAGE_CREATE
        (id == thread id), as Discord does for a new forum post. Returns the thread."""
        tid = thread_id or self.snowflakes.next()
        forum = self.channels[parent_id]["type"] == GUILD_FORUM
        if forum:
            self.add_forum_post(tid, parent_id, name, starter_content, author_id=owner_id)
        else:
            self.add_thread(tid, parent_id, name=name, owner_id=owner_id, private=private)
        thread = {**self.channels[tid], "newly_created": True}
        self.dispatch("THREAD_CREATE", thread, shard_id=shard_id)
        if forum:
            self.dispatch("MESSAGE_CREATE", self.messages[tid], shard_id=shard_id)
        return thread

    def interaction_create(
        self,
        custom_id: str,
        *,
        user_id: int = USER_ID,
        channel_id: int | None = None,
        guild_id: int | None = None,
        message_id: int | None = None,
        values: Sequence[str] | None = None,
        component_type: int | None = None,
        interaction_id: int | None = None,
        token: str | None = None,
        shard_id: int | None = None,
    ) -> JSONDict:
        """Dispatch INTERACTION_CREATE type 3 (MESSAGE_COMPONENT): a button press, or a select
        when `values` is given, on `message_id` (default: the latest stored message in the
        channel carrying `custom_id`, else a stand-in bot message). The fake then accepts one
        callback within ``interaction_window_s``. Re-using `interaction_id`/`token` models a
        duplicate delivery."""
        clicker = self.add_user(user_id)
        channel_id, guild_id = self._place(channel_id, guild_id, user_id)
        source = self._component_source(channel_id, guild_id, custom_id, message_id)
        data: JSONDict = {"custom_id": custom_id}
        data["component_type"] = component_type or (BUTTON if values is None else STRING_SELECT)
        if values is not None:
            data["values"] = list(values)
        iid = interaction_id or self.snowflakes.next()
        known = self.interactions.get(iid)
        tok = token or (known.token if known else interaction_token())
        payload: JSONDict = {
            "id": str(iid),
            "application_id": str(APP_ID),
            "type": 3,
            "data": data,
            "channel_id": str(channel_id),
            "channel": self.channels[channel_id],
            "token": tok,
            "version": 1,
            "message": stub(source),
            "locale": "en-US",
            "app_permissions": ALL_PERMISSIONS,
            "entitlements": [],
            "attachment_size_limit": 10 * 1024 * 1024,
            "context": 1 if guild_id is None else 0,
        }
        if guild_id is None:
            payload["user"] = clicker
            payload["authorizing_integration_owners"] = {"1": str(user_id)}
        else:
            payload.update(guild_id=str(guild_id), guild_locale="en-US")
            payload["guild"] = {"id": str(guild_id), "locale": "en-US", "features": []}
            payload["member"] = {**member(clicker), "permissions": ALL_PERMISSIONS}
            payload["authorizing_integration_owners"] = {"0": str(guild_id)}
        if known is None:
            self.interactions[iid] = InteractionRecord(
                iid, tok, channel_id, guild_id, int(source["id"]), payload, time.monotonic()
            )
        self.dispatch("INTERACTION_CREATE", payload, shard_id=shard_id)
        return payload

    # --- gateway hooks -----------------------------------------------------------------------

    def _bot_user(self) -> JSONDict:
        return bot_user(self.bot_username)

    def _guild_ids(self) -> list[int]:
        return list(self.guilds)

    def _guild_create(self, guild_id: int) -> JSONDict:
        """GUILD_CREATE: channels (no threads), active threads, the bot as member, @everyone."""
        own = [c for c in self.channels.values() if c.get("guild_id") == str(guild_id)]
        return {
            **self.guilds[guild_id],
            "unavailable": False,
            "joined_at": iso(guild_id),
            "large": False,
            "member_count": 2,
            "channels": [c for c in own if c["type"] not in THREAD_TYPES],
            "threads": [c for c in own if c["type"] in THREAD_TYPES],
            "members": [member(self._bot_user())],
            "roles": [everyone_role(guild_id)],
            "emojis": [],
            "stickers": [],
            "features": [],
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "preferred_locale": "en-US",
            "premium_tier": 0,
            "system_channel_id": None,
        }

    # --- internals ---------------------------------------------------------------------------

    def _add_channel(self, channel: JSONDict) -> JSONDict:
        self.channels[int(channel["id"])] = channel
        return channel

    def _require_guild_of(self, channel_id: int) -> int:
        guild_id = self.guild_of(channel_id)
        if guild_id is None:
            raise KeyError(f"channel {channel_id} is not a known guild channel")
        return guild_id

    def _place(
        self, channel_id: int | None, guild_id: int | None, user_id: int
    ) -> tuple[int, int | None]:
        """Resolve (channel, guild) for an inbound event, registering unknown channels."""
        if channel_id is None:
            if guild_id is None:
                return self.dm_channel_id(user_id), None
            channel_id = next(
                int(c["id"])
                for c in self.channels.values()
                if c.get("guild_id") == str(guild_id) and c["type"] == 0
            )
        if channel_id not in self.channels:
            if guild_id is None:
                self.add_dm(channel_id, user_id)
            else:
                self.add_text_channel(channel_id, guild_id, name=f"channel-{channel_id % 1000}")
        return channel_id, guild_id if guild_id is not None else self.guild_of(channel_id)

    def _store(self, data: JSONDict) -> JSONDict:
        self.messages[int(data["id"])] = data
        channel = self.channels.get(int(data["channel_id"]))
        if channel is not None:
            channel["last_message_id"] = data["id"]
        return data

    def _reply_fields(self, channel_id: int, guild_id: int | None, target_id: int) -> JSONDict:
        reference: JSONDict = {
            "type": 0,
            "message_id": str(target_id),
            "channel_id": str(channel_id),
        }
        if guild_id is not None:
            reference["guild_id"] = str(guild_id)
        target = self.messages.get(target_id)
        return {
            "type": 19,
            "message_reference": reference,
            "referenced_message": stub(target) if target is not None else None,
        }

    def _upload(self, channel_id: int, filename: str, data: bytes) -> JSONDict:
        """Store bytes on the fake CDN; the attachment's url downloads them through the fake."""
        payload = attachment(
            self.snowflakes.next(), channel_id, filename, len(data), _mime(filename)
        )
        self.cdn_files["/" + payload["url"].split("/", 3)[3]] = data
        return payload

    def _component_source(
        self, channel_id: int, guild_id: int | None, custom_id: str, message_id: int | None
    ) -> JSONDict:
        if message_id is not None and message_id in self.messages:
            return self.messages[message_id]
        if message_id is None:
            for data in reversed(self.messages.values()):
                if data["channel_id"] == str(channel_id) and _has_custom_id(data, custom_id):
                    return data
        button = {"type": 2, "style": 1, "label": "Go", "custom_id": custom_id}
        stand_in = message(
            message_id or self.snowflakes.next(),
            channel_id,
            self._bot_user(),
            "an earlier bot message",
            guild_id=guild_id,
            components=[{"type": 1, "components": [button]}],
        )
        return self._store(stand_in)


def _has_custom_id(data: JSONDict, custom_id: str) -> bool:
    rows = data.get("components") or []
    return any(
        child.get("custom_id") == custom_id for row in rows for child in row.get("components", [])
    )


def _mime(filename: str) -> str:
    ext = filename.rsplit(".", 1)[-1].lower()
    types = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "txt": "text/plain"}
    return types.get(ext, "application/octet-stream")
