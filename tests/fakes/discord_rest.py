"""REST routes of the fake Discord: messages, reactions, threads, interaction callbacks and
followup webhooks, keyed by discord.py's own ``Route`` templates.

Bot-authored messages are stored in the world, listed in ``sent`` and, like on Discord, echoed
to the gateway as MESSAGE_CREATE/MESSAGE_UPDATE (``echo_own_messages``). Handlers raise
``ApiError`` for Discord error answers; FakeDiscord (``discord.py``) does the HTTP plumbing.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from tests.fakes.discord_payloads import (
    APP_ID,
    BOT_ID,
    GATEWAY_URL,
    GUILD_FORUM,
    LOADING_FLAG,
    OWNER_ID,
    PUBLIC_THREAD,
    UNKNOWN_INTERACTION,
    UNKNOWN_MESSAGE,
    UNKNOWN_WEBHOOK,
    ApiError,
    JSONDict,
    invalid_form,
    member,
    message,
    thread_channel,
    user,
    validate_message,
)
from tests.fakes.discord_world import DiscordWorld, InteractionRecord

EPHEMERAL: Final = 1 << 6


@dataclass(frozen=True)
class Call:
    """One REST request: route template and path params as in discord.py's ``Route``."""

    method: str
    route: str  # e.g. "/channels/{channel_id}/messages"; the raw path when no route matched
    params: dict[str, str]
    path: str
    query: dict[str, str]
    json: Any
    headers: dict[str, str]
    files: list[JSONDict]
    at: float

    @property
    def key(self) -> str:
        return f"{self.method} {self.route}"


@dataclass(frozen=True)
class InteractionResponse:
    """An accepted interaction callback: type 4/5/6/7/9 and its data."""

    interaction_id: int
    type: int
    data: JSONDict
    at: float


Handler = Callable[[Call], Any]


class RestRoutes(DiscordWorld):
    """Route handlers over the world; see the module docstring."""

    def __init__(
        self,
        *,
        default_world: bool,
        heartbeat_interval_ms: int,
        interaction_window_s: float,
        echo_own_messages: bool,
    ) -> None:
        super().__init__(default_world=default_world, heartbeat_interval_ms=heartbeat_interval_ms)
        self.shards = 1
        self.interaction_window_s = interaction_window_s
        self.echo_own_messages = echo_own_messages
        self.sent: list[JSONDict] = []  # every message the bot created, in order
        self.reactions: dict[int, list[str]] = defaultdict(list)  # message id -> bot's emoji
        self.interaction_responses: list[InteractionResponse] = []

    def messages_in(self, channel_id: int) -> list[JSONDict]:
        return [m for m in self.messages.values() if m["channel_id"] == str(channel_id)]

    def _message_in(self, channel_id: int, message_id: str) -> JSONDict | None:
        data = self.messages.get(int(message_id)) if message_id.isdigit() else None
        return data if data is not None and data["channel_id"] == str(channel_id) else None

    def _echo(self, event: str, data: JSONDict) -> None:
        """Discord also delivers the bot's own messages/threads on the gateway."""
        if self.echo_own_messages and not data.get("flags", 0) & EPHEMERAL:
            with contextlib.suppress(RuntimeError):  # no session connected: nothing to echo to
                self.dispatch(event, data)

    def _forget(self, data: JSONDict) -> None:
        """Delete a stored message; Discord announces that as MESSAGE_DELETE."""
        del self.messages[int(data["id"])]
        if not data.get("flags", 0) & EPHEMERAL:
            self._echo(
                "MESSAGE_DELETE",
                {k: data[k] for k in ("id", "channel_id", "guild_id") if k in data},
            )

    # --- REST routes -------------------------------------------------------------------------

    def _route_table(self) -> list[tuple[str, str, Handler, bool]]:
        """(method, discord.py route template, handler, needs bot auth). Literal paths first."""
        hook = "/webhooks/{webhook_id}/{webhook_token}"
        reaction = "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me"
        return [
            ("GET", "/users/@me", lambda c: self._bot_user(), True),
            ("GET", "/oauth2/applications/@me", self._app_info, True),
            ("GET", "/gateway", lambda c: {"url": GATEWAY_URL}, False),
            ("GET", "/gateway/bot", self._gateway_bot, True),
            ("POST", "/users/@me/channels", self._open_dm, True),
            ("GET", "/channels/{channel_id}", lambda c: self.channels[_id(c, "channel_id")], True),
            ("POST", "/channels/{channel_id}/messages", self._create_message, True),
            ("GET", "/channels/{channel_id}/messages/{message_id}", self._get_message, True),
            ("PATCH", "/channels/{channel_id}/messages/{message_id}", self._edit_message, True),
            ("DELETE", "/channels/{channel_id}/messages/{message_id}", self._delete_message, True),
            ("POST", "/channels/{channel_id}/typing", lambda c: None, True),
            ("PUT", reaction, self._react, True),
            ("DELETE", reaction, self._unreact, True),
            ("POST", "/channels/{channel_id}/threads", self._start_thread, True),
            (
                "POST",
                "/channels/{channel_id}/messages/{message_id}/threads",
                self._thread_from,
                True,
            ),
            ("POST", "/interactions/{webhook_id}/{webhook_token}/callback", self._callback, False),
            ("POST", hook, self._followup, False),
            ("GET", hook + "/messages/@original", self._get_original, False),
            ("PATCH", hook + "/messages/@original", self._edit_original, False),
            ("DELETE", hook + "/messages/@original", self._delete_original, False),
            ("PATCH", hook + "/messages/{message_id}", self._edit_followup, False),
            ("DELETE", hook + "/messages/{message_id}", self._delete_followup, False),
        ]

    def _app_info(self, call: Call) -> JSONDict:
        return {
            "id": str(APP_ID),
            "name": "chatgate",
            "description": "fake application",
            "icon": None,
            "bot_public": False,
            "bot_require_code_grant": False,
            "owner": user(OWNER_ID, "owner"),
            "verify_key": "0" * 64,
            "flags": 0,
            "team": None,
            "bot": self._bot_user(),
        }

    def _gateway_bot(self, call: Call) -> JSONDict:
        limit = {"total": 1000, "remaining": 1000 - self.identify_count, "reset_after": 0}
        return {
            "url": GATEWAY_URL,
            "shards": self.shards,
            "session_start_limit": {**limit, "max_concurrency": 1},
        }

    def _open_dm(self, call: Call) -> JSONDict:
        recipient = int((call.json or {}).get("recipient_id", 0))
        return self.channels[self.dm_channel_id(recipient)]

    def _create_message(self, call: Call) -> JSONDict:
        body = call.json or {}
        validate_message(body, files=len(call.files))
        data = self._bot_message(_id(call, "channel_id"), body, call.files)
        self._echo("MESSAGE_CREATE", data)
        return data

    def _get_message(self, call: Call) -> JSONDict:
        return self.messages[_id(call, "message_id")]

    def _edit_message(self, call: Call) -> JSONDict:
        data = self.messages[_id(call, "message_id")]
        if data["author"]["id"] != str(BOT_ID):
            raise ApiError(403, 50005, "Cannot edit a message authored by another user")
        return self._apply_edit(data, call)

    def _delete_message(self, call: Call) -> None:
        data = self.messages[_id(call, "message_id")]
        if data["author"]["id"] != str(BOT_ID) and "guild_id" not in data:
            raise ApiError(403, 50003, "Cannot execute action on a DM channel")
        self._forget(data)

    def _react(self, call: Call) -> None:
        emoji = call.params["emoji"]
        if emoji not in self.reactions[_id(call, "message_id")]:
            self.reactions[_id(call, "message_id")].append(emoji)

    def _unreact(self, call: Call) -> None:
        with contextlib.suppress(ValueError):
            self.reactions[_id(call, "message_id")].remove(call.params["emoji"])

    def _start_thread(self, call: Call) -> JSONDict:
        """A thread without a message, or a forum post (body ``{name, message: {...}}``)."""
        parent_id, body = _id(call, "channel_id"), call.json or {}
        thread_id = self.snowflakes.next()
        if self.channels[parent_id]["type"] != GUILD_FORUM:
            return self._new_thread(
                thread_id, parent_id, body, int(body.get("type") or PUBLIC_THREAD)
            )
        starter = body.get("message") or {}
        validate_message(starter, files=len(call.files))
        thread = self._new_thread(thread_id, parent_id, body, PUBLIC_THREAD)
        first = self._bot_message(thread_id, starter, call.files, message_id=thread_id)
        self._echo("MESSAGE_CREATE", first)
        return {**thread, "message": first}

    def _thread_from(self, call: Call) -> JSONDict:
        """A thread started from a message takes the message's id, as on Discord."""
        return self._new_thread(_id(call, "message_id"), _id(call, "channel_id"), call.json or {})

    def _new_thread(
        self, thread_id: int, parent_id: int, body: JSONDict, kind: int = PUBLIC_THREAD
    ) -> JSONDict:
        if thread_id in self.channels:
            raise ApiError(400, 160004, "A thread has already been created for this message")
        guild_id = self.guild_of(parent_id) or 0
        name = str(body.get("name") or "thread")
        thread = thread_channel(
            thread_id, guild_id, parent_id, name, owner_id=BOT_ID, channel_type=kind
        )
        self._add_channel(thread)
        self._echo("THREAD_CREATE", {**thread, "newly_created": True})
        return thread

    # --- interactions ------------------------------------------------------------------------

    def _callback(self, call: Call) -> JSONDict | None:
        """Initial response: once, within interaction_window_s, else 404 10062."""
        record = self.interactions.get(_id(call, "webhook_id"))
        if record is None or record.token != call.params["webhook_token"]:
            raise ApiError(*UNKNOWN_INTERACTION)
        late = time.monotonic() - record.created > self.interaction_window_s
        if late or record.response_type is not None:
            raise ApiError(*UNKNOWN_INTERACTION)
        body = call.json or {}
        kind, data = int(body.get("type", 0)), body.get("data") or {}
        if kind in (4, 7):
            validate_message(data, edit=kind == 7, files=len(call.files))
        record.response_type, record.response_data = kind, data
        self.interaction_responses.append(
            InteractionResponse(record.id, kind, data, time.monotonic())
        )
        created = self._respond(record, kind, data, call.files)
        if "with_response" not in call.query:
            return None
        flags = int(data.get("flags") or 0)
        answer: JSONDict = {
            "interaction": {
                "id": str(record.id),
                "type": record.payload["type"],
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(flags & EPHEMERAL),
            }
        }
        if created is not None:
            answer["interaction"]["response_message_id"] = created["id"]
            answer["resource"] = {"type": kind, "message": created}
        return answer

    def _respond(
        self, record: InteractionRecord, kind: int, data: JSONDict, files: list[JSONDict]
    ) -> JSONDict | None:
        """Apply a callback: 4 posts, 5 posts a loading message, 6 defers, 7 edits the source."""
        if kind == 4:
            created = self._bot_message(record.channel_id, data, files, webhook=True)
        elif kind == 5:
            flags = (int(data.get("flags") or 0) & EPHEMERAL) | LOADING_FLAG
            created = self._bot_message(record.channel_id, {"flags": flags}, [], webhook=True)
        elif kind in (6, 7) and record.message_id in self.messages:
            record.original_message_id = record.message_id
            source = self.messages[record.message_id]
            return self._apply_edit(source, None, data) if kind == 7 else None
        else:
            return None
        self._echo("MESSAGE_CREATE", created)
        record.original_message_id = int(created["id"])
        return created

    def _hook_record(self, call: Call) -> InteractionRecord:
        """The interaction behind a followup webhook (application id + interaction token)."""
        token = call.params["webhook_token"]
        record = next((r for r in self.interactions.values() if r.token == token), None)
        if (
            record is None
            or call.params["webhook_id"] != str(APP_ID)
            or record.response_type is None
        ):
            raise ApiError(*UNKNOWN_WEBHOOK)
        return record

    def _followup(self, call: Call) -> JSONDict | None:
        record, body = self._hook_record(call), call.json or {}
        validate_message(body, files=len(call.files))
        data = self._bot_message(record.channel_id, body, call.files, webhook=True)
        record.followup_ids.append(int(data["id"]))
        self._echo("MESSAGE_CREATE", data)
        return data if call.query.get("wait") in ("true", "1", "True") else None

    def _original(self, call: Call) -> JSONDict:
        record = self._hook_record(call)
        if record.original_message_id not in self.messages:
            raise ApiError(*UNKNOWN_MESSAGE)
        return self.messages[record.original_message_id or 0]

    def _get_original(self, call: Call) -> JSONDict:
        return self._original(call)

    def _edit_original(self, call: Call) -> JSONDict:
        return self._apply_edit(self._original(call), call)

    def _delete_original(self, call: Call) -> None:
        self._forget(self._original(call))

    def _followup_message(self, call: Call) -> JSONDict:
        record = self._hook_record(call)
        mid = _id(call, "message_id")
        if mid not in record.followup_ids or mid not in self.messages:
            raise ApiError(*UNKNOWN_MESSAGE)
        return self.messages[mid]

    def _edit_followup(self, call: Call) -> JSONDict:
        return self._apply_edit(self._followup_message(call), call)

    def _delete_followup(self, call: Call) -> None:
        self._forget(self._followup_message(call))

    # --- bot messages ------------------------------------------------------------------------

    def _bot_message(
        self,
        channel_id: int,
        body: JSONDict,
        files: list[JSONDict],
        *,
        webhook: bool = False,
        message_id: int | None = None,
    ) -> JSONDict:
        """Store and return a message authored by the bot from a send/respond/followup body."""
        guild_id = self.guild_of(channel_id)
        data = message(
            message_id or self.snowflakes.next(),
            channel_id,
            self._bot_user(),
            str(body.get("content") or ""),
            guild_id=guild_id,
            embeds=body.get("embeds") or [],
            components=body.get("components") or [],
            attachments=[self._upload(channel_id, f["filename"], f["data"]) for f in files],
            flags=int(body.get("flags") or 0),
            tts=bool(body.get("tts")),
        )
        if body.get("nonce") is not None:
            data["nonce"] = body["nonce"]
        if guild_id is not None:
            data["member"] = member()
        if webhook:
            data.update(webhook_id=str(APP_ID), application_id=str(APP_ID))
        reference = body.get("message_reference")
        if isinstance(reference, dict) and reference.get("message_id"):
            target = self._message_in(channel_id, str(reference["message_id"]))
            if target is None and reference.get("fail_if_not_exists", True):
                raise invalid_form(
                    "message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message"
                )
            data.update(self._reply_fields(channel_id, guild_id, int(reference["message_id"])))
        self._store(data)
        self.sent.append(data)
        return data

    def _apply_edit(
        self, data: JSONDict, call: Call | None, body: JSONDict | None = None
    ) -> JSONDict:
        """PATCH semantics: only the keys sent change; the loading flag clears on first edit."""
        body = body if body is not None else (call.json if call is not None else None) or {}
        validate_message(body, edit=True)
        for key in ("content", "embeds", "components", "attachments"):
            if key in body:
                data[key] = body[key] if body[key] is not None else ([] if key != "content" else "")
        if "flags" in body:
            data["flags"] = int(body["flags"] or 0)
        data["flags"] = data.get("flags", 0) & ~LOADING_FLAG
        if call is not None and call.files:
            uploads = [
                self._upload(int(data["channel_id"]), f["filename"], f["data"]) for f in call.files
            ]
            data["attachments"] = [*data.get("attachments", []), *uploads]
        data["edited_timestamp"] = _now_iso()
        self._echo("MESSAGE_UPDATE", data)
        return data


def _id(call: Call, name: str) -> int:
    value = call.params[name]
    if not value.isdigit():
        raise invalid_form(name, "NUMBER_TYPE_COERCE", f"Value {value!r} is not snowflake.")
    return int(value)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()
