"""A fake Discord (REST API + gateway WebSocket) over TLS on 127.0.0.1, for the real discord.py.

discord.py has no base-URL setting. The fake serves HTTPS and WSS on one port with a leaf
certificate for discord.com and gateway.discord.gg from a per-process test CA (trustme); a
client reaches it through chatgate's public config (`resolve` + `ca_file`, see
`channel_yaml`) or, in-process, with `connector()`. Responses are exact `application/json`
(discord.py parses nothing else) and gateway frames are TEXT (the client only inflates binary).

Gateway: HELLO, heartbeat ACKs, IDENTIFY → READY + GUILD_CREATE per guild, RESUME → replay of
what the session missed + RESUMED. Each IDENTIFY starts a session whose dispatches are logged
with their sequence numbers, so a dropped socket loses nothing that a RESUME cannot replay.
Faults: `drop()` (close 4000 or abort), `reconnect()` (op 7), `invalidate()` (op 9),
`close(code)` (e.g. 4014), `deaf` (heartbeats ACKed, dispatches withheld), `fail(...)` for
canned REST errors (429 with `Via`, 403 50013, 404 10003, 503, ...), `refuse_identify_with`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import ssl
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import trustme
from aiohttp import BodyPartReader, web

TOKEN = "MTAwMA.fake-discord.bot-token"
BOT_ID = 2000
APP_ID = 1000
BOT_NAME = "fakebot"
HOSTS = ("discord.com", "gateway.discord.gg", "cdn.discordapp.com")
JSONDict = dict[str, Any]
_CA: trustme.CA | None = None
_IDS = re.compile(r"/(itoken)?\d+(?=/|$)")


def test_ca() -> trustme.CA:
    """One CA per process: every fake's leaf certificate is issued by it."""
    global _CA
    if _CA is None:
        _CA = trustme.CA()
    return _CA


@dataclass
class Call:
    method: str
    path: str
    json: Any
    at: float
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    files: list[JSONDict] = field(default_factory=list)  # multipart uploads: filename, data

    @property
    def route(self) -> str:
        """ "POST /channels/{id}/messages" style: ids replaced, for matching."""
        return f"{self.method} {_IDS.sub(lambda m: '/{token}' if m[1] else '/{id}', self.path)}"


@dataclass(frozen=True)
class Fault:
    status: int
    body: JSONDict
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def rate_limited(retry_after: float = 0.2, *, is_global: bool = False) -> Fault:
    """A 429 discord.py honours itself (it needs the `Via` header to trust it)."""
    body = {
        "message": "You are being rate limited.",
        "retry_after": retry_after,
        "global": is_global,
    }
    headers = {"Via": "1.1 google", "Retry-After": str(retry_after)}
    if is_global:
        headers["X-RateLimit-Global"] = "true"
    return Fault(429, body, headers)


def error(status: int, code: int, message: str) -> Fault:
    return Fault(status, {"code": code, "message": message})


MISSING_PERMISSIONS = error(403, 50013, "Missing Permissions")
UNKNOWN_CHANNEL = error(404, 10003, "Unknown Channel")
UNKNOWN_MESSAGE = error(404, 10008, "Unknown Message")
UNAUTHORIZED = error(401, 0, "401: Unauthorized")
UNAVAILABLE = error(503, 0, "Service Unavailable")  # 500/502/504 make discord.py sleep 25 s


@dataclass
class Session:
    id: str
    shard: list[int]
    seq: int = 0
    log: list[JSONDict] = field(default_factory=list)
    socket: web.WebSocketResponse | None = None
    order: asyncio.Lock = field(default_factory=asyncio.Lock)  # frames leave in dispatch order


@dataclass
class Guild:
    id: int
    name: str
    channels: dict[int, JSONDict] = field(default_factory=dict)
    threads: dict[int, JSONDict] = field(default_factory=dict)


class FakeDiscord:
    def __init__(self, *, token: str = TOKEN, heartbeat_ms: int = 41_250) -> None:
        self.token = token
        self.heartbeat_ms = heartbeat_ms
        self.calls: list[Call] = []
        self.faults: dict[str, deque[Fault]] = {}
        self.sessions: dict[str, Session] = {}
        self.identifies: list[JSONDict] = []
        self.resumes: list[JSONDict] = []
        self.guilds: dict[int, Guild] = {}
        self.deaf = False
        self.refuse_identify_with: int | None = None  # a close code sent instead of READY
        self.app_flags = 1 << 19  # gateway_message_content_limited: the portal switch is on
        self.resume_overlap = 0  # frames the client already saw, replayed again on RESUME
        self.messages: dict[int, JSONDict] = {}  # every message by id (ours and users')
        self.created: list[JSONDict] = []  # the bot's messages, in order
        self.cdn_files: dict[str, bytes] = {}  # CDN path → bytes of users' attachments
        self.cdn_downloads: list[str] = []
        self._ids = itertools.count(10_000_000)
        self._sessions = itertools.count(1)
        self._pending: set[asyncio.Task[None]] = set()
        self._runner: web.AppRunner | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="fake-discord-")
        self.port = 0

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> FakeDiscord:
        ca = test_ca()
        cert = ca.issue_cert(*HOSTS)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(context)
        app = web.Application()
        app.router.add_get("/", self._gateway)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        app.router.add_get("/attachments/{path:.*}", self._cdn)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        self.ca_file.write_text(ca.cert_pem.bytes().decode())
        return self

    async def __aexit__(self, *exc: object) -> None:
        for session in self.sessions.values():
            if session.socket is not None:
                with contextlib.suppress(Exception):
                    await session.socket.close()
        if self._runner is not None:
            await self._runner.cleanup()
        self._dir.cleanup()

    @property
    def ca_file(self) -> Path:
        return Path(self._dir.name) / "ca.pem"

    @property
    def resolve(self) -> dict[str, str]:
        return {host: f"127.0.0.1:{self.port}" for host in HOSTS}

    def channel_yaml(self, indent: str = "    ") -> str:
        """The `channels.discord` keys that point chatgate at this fake."""
        resolve = ", ".join(f'"{h}": "{a}"' for h, a in self.resolve.items())
        return (
            f'{indent}token: "{self.token}"\n{indent}ca_file: {self.ca_file}\n'
            f"{indent}resolve: {{{resolve}}}\n{indent}guild_ready_timeout_s: 0.05\n"
        )

    def connector(self) -> aiohttp.TCPConnector:
        """For a bare discord.py client (bench floor, fake self-tests)."""
        from chatgate.channels.discord.net import StaticResolver, ssl_context

        overrides = {host: ("127.0.0.1", self.port) for host in HOSTS}
        return aiohttp.TCPConnector(
            resolver=StaticResolver(overrides), ssl=ssl_context(self.ca_file.read_text()), limit=0
        )

    # -- world -------------------------------------------------------------------------------

    def add_guild(self, guild_id: int = 5000, *channel_ids: int, name: str = "guild") -> Guild:
        guild = self.guilds[guild_id] = Guild(guild_id, name)
        for cid in channel_ids or (4000,):
            guild.channels[cid] = _channel(cid, guild_id, 0, f"ch{cid}")
        return guild

    def add_thread(
        self, guild_id: int, parent_id: int, thread_id: int, *, forum: bool = False
    ) -> None:
        guild = self.guilds[guild_id]
        if forum:
            guild.channels[parent_id] = _channel(parent_id, guild_id, 15, f"forum{parent_id}")
        thread = _channel(thread_id, guild_id, 11, f"thread{thread_id}", parent_id=parent_id)
        thread.update(
            owner_id=str(3000),
            thread_metadata={
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": _now(),
                "locked": False,
            },
            message_count=0,
            member_count=1,
        )
        guild.threads[thread_id] = thread
        self.dispatch("THREAD_CREATE", thread)

    def dm(
        self,
        user_id: int,
        text: str,
        *,
        name: str = "alice",
        bot: bool = False,
        files: Sequence[tuple[str, bytes, str]] = (),
    ) -> JSONDict:
        """A DM; ``files`` are (name, bytes, content type) attachments served by the fake CDN."""
        return self.post(
            7_000_000 + user_id, text, user_id=user_id, name=name, bot=bot, files=files
        )

    def post(
        self,
        channel_id: int,
        text: str,
        *,
        guild_id: int | None = None,
        user_id: int = 3000,
        name: str = "alice",
        bot: bool = False,
        mention: bool = False,
        reply_to: int | None = None,
        files: Sequence[tuple[str, bytes, str]] = (),
    ) -> JSONDict:
        """A user's message (MESSAGE_CREATE); `mention` prefixes and lists the bot mention."""
        author = _user(user_id, name, bot=bot)
        mid = next(self._ids)
        data: JSONDict = {
            "id": str(mid),
            "channel_id": str(channel_id),
            "type": 19 if reply_to else 0,
            "content": f"<@{BOT_ID}> {text}" if mention else text,
            "author": author,
            "timestamp": _now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [_user(BOT_ID, BOT_NAME, bot=True)] if mention else [],
            "mention_roles": [],
            "attachments": [self._attach(channel_id, name, blob, ct) for name, blob, ct in files],
            "embeds": [],
            "pinned": False,
        }
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
            data["member"] = _member()
        if reply_to is not None:
            data["message_reference"] = {"message_id": str(reply_to), "channel_id": str(channel_id)}
            replied = self.messages.get(reply_to)
            if replied is not None:
                data["referenced_message"] = replied
        self.messages[mid] = data
        self.dispatch("MESSAGE_CREATE", data)
        return data

    def edit(self, message: JSONDict, text: str) -> JSONDict:
        data = {**message, "content": text, "edited_timestamp": _now()}
        self.dispatch("MESSAGE_UPDATE", data)
        return data

    def react(
        self,
        message_id: int,
        emoji: str = "\N{THUMBS UP SIGN}",
        *,
        user_id: int = 3000,
        bot: bool = False,
        name: str = "alice",
    ) -> JSONDict:
        """A reaction added to a message (MESSAGE_REACTION_ADD), naming its author as Discord
        does (`message_author_id`); in a guild with the reacting member."""
        message = self.messages[message_id]
        channel_id = int(message["channel_id"])
        data: JSONDict = {
            "user_id": str(user_id),
            "channel_id": str(channel_id),
            "message_id": str(message_id),
            "message_author_id": message["author"]["id"],
            "emoji": {"id": None, "name": emoji},
            "burst": False,
            "burst_colors": [],
            "type": 0,
        }
        guild_id = self._guild_of(channel_id)
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
            data["member"] = {**_member(), "user": _user(user_id, name, bot=bot)}
        self.dispatch("MESSAGE_REACTION_ADD", data)
        return data

    def press(
        self,
        message_id: int,
        custom_id: str,
        *,
        user_id: int = 3000,
        values: list[str] | None = None,
        locale: str = "en-US",
    ) -> JSONDict:
        """A click on a component of one of the bot's messages (INTERACTION_CREATE); `locale`
        is the clicking user's client language, as Discord sends it."""
        message = self.messages[message_id]
        channel_id = int(message["channel_id"])
        guild_id = self._guild_of(channel_id)
        data: JSONDict = {"custom_id": custom_id, "component_type": 3 if values else 2}
        if values is not None:
            data["values"] = values
        interaction: JSONDict = {
            "id": str(next(self._ids)),
            "application_id": str(APP_ID),
            "type": 3,
            "data": data,
            "token": f"itoken{next(self._ids)}",
            "version": 1,
            "channel_id": str(channel_id),
            "channel": self._channel_payload(channel_id, guild_id),
            "message": message,
            "attachment_size_limit": 8_388_608,
            "locale": locale,
            "app_permissions": "0",
            "entitlements": [],
        }
        user = _user(user_id, "alice")
        if guild_id is not None:
            interaction["guild_id"] = str(guild_id)
            interaction["member"] = {**_member(), "user": user, "permissions": "0"}
        else:
            interaction["user"] = user
        self.dispatch("INTERACTION_CREATE", interaction)
        return interaction

    # -- gateway faults ----------------------------------------------------------------------

    def dispatch(self, event: str, data: JSONDict) -> None:
        """Log the event in every session and send it where a socket is attached."""
        for session in self.sessions.values():
            session.seq += 1
            frame = {"op": 0, "t": event, "s": session.seq, "d": data}
            session.log.append(frame)
            if session.socket is not None and not self.deaf:
                task = asyncio.ensure_future(self._ordered(session, session.socket, frame))
                self._pending.add(task)
                task.add_done_callback(self._pending.discard)

    @staticmethod
    async def _ordered(session: Session, socket: web.WebSocketResponse, frame: JSONDict) -> None:
        async with session.order:
            await _send(socket, frame)

    async def drop(self, code: int = 4000) -> None:
        """Close every gateway socket (4000: resumable)."""
        for session in self.sessions.values():
            socket, session.socket = session.socket, None
            if socket is not None:
                await socket.close(code=code)

    async def reconnect(self) -> None:
        """op 7: the client should reconnect and RESUME."""
        for session in self.sessions.values():
            if session.socket is not None:
                await _send(session.socket, {"op": 7, "d": None})

    async def invalidate(self) -> None:
        """op 9 (not resumable): the client must IDENTIFY again."""
        for session in list(self.sessions.values()):
            if session.socket is not None:
                await _send(session.socket, {"op": 9, "d": False})
            del self.sessions[session.id]

    @property
    def connected(self) -> int:
        return sum(
            1 for s in self.sessions.values() if s.socket is not None and not s.socket.closed
        )

    # -- REST faults and records ---------------------------------------------------------------

    def fail(self, route: str, *faults: Fault) -> None:
        """Queue faults for a route like "POST /channels/{id}/messages" (served in order)."""
        self.faults.setdefault(route, deque()).extend(faults)

    def calls_to(self, route: str) -> list[Call]:
        return [c for c in self.calls if c.route == route and c.status < 300]

    def sent(self) -> list[Call]:
        """Messages the bot created successfully."""
        return self.calls_to("POST /channels/{id}/messages")

    async def wait_for(
        self,
        route: str,
        count: int = 1,
        *,
        timeout: float = 30.0,
        where: Callable[[Call], bool] | None = None,
    ) -> list[Call]:
        deadline = time.monotonic() + timeout
        while True:
            found = [c for c in self.calls_to(route) if where is None or where(c)]
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                seen = [(c.route, c.status) for c in self.calls[-20:]]
                raise AssertionError(
                    f"{count}× {route} not seen within {timeout}s; last calls: {seen}"
                )
            await asyncio.sleep(0.01)

    # -- handlers ------------------------------------------------------------------------------

    def _attach(self, channel_id: int, name: str, blob: bytes, content_type: str) -> JSONDict:
        aid = next(self._ids)
        path = f"/attachments/{channel_id}/{aid}/{name}"
        self.cdn_files[path] = blob
        url = f"https://cdn.discordapp.com{path}?ex=1&is=2&hm=3"  # signed, token-free
        return {
            "id": str(aid),
            "filename": name,
            "size": len(blob),
            "url": url,
            "proxy_url": url.replace("cdn.discordapp.com", "media.discordapp.net"),
            "content_type": content_type,
        }

    async def _cdn(self, request: web.Request) -> web.Response:
        blob = self.cdn_files.get(request.path)
        if blob is None:
            return web.json_response({"message": "404: Not Found", "code": 0}, status=404)
        self.cdn_downloads.append(request.path)
        return web.Response(body=blob, content_type="application/octet-stream")

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["path"]
        files: list[JSONDict] = []
        if request.content_type == "multipart/form-data":  # payload_json + files[n]
            payload = None
            async for part in await request.multipart():
                if not isinstance(part, BodyPartReader):
                    continue
                if part.name == "payload_json":
                    payload = json.loads(await part.text())
                else:
                    files.append({"filename": part.filename, "data": bytes(await part.read())})
        else:
            body = await request.read()
            is_json = body and request.content_type == "application/json"
            payload = json.loads(body) if is_json else None
        call = Call(
            request.method,
            path,
            payload,
            time.monotonic(),
            headers=dict(request.headers),
            files=files,
        )
        self.calls.append(call)
        is_interaction = path.startswith(("/interactions/", "/webhooks/"))  # token in the path
        if not is_interaction and request.headers.get("Authorization") != f"Bot {self.token}":
            call.status = 401
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        queue = self.faults.get(call.route)
        if queue:
            fault = queue.popleft()
            if fault.delay_s:
                await asyncio.sleep(fault.delay_s)
            call.status = fault.status
            return _json(fault.body, fault.status, fault.headers)
        return self._serve(call)

    def _serve(self, call: Call) -> web.Response:
        route, parts = call.route, call.path.strip("/").split("/")
        if route == "GET /users/@me":
            return _json(_user(BOT_ID, BOT_NAME, bot=True))
        if route.startswith("GET /users/"):
            return _json(_user(int(parts[1]), BOT_NAME if int(parts[1]) == BOT_ID else "someone"))
        if route == "GET /oauth2/applications/@me":
            return _json(_application(self.app_flags))
        if route == "GET /gateway/bot":
            limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
            return _json(
                {"url": "wss://gateway.discord.gg", "shards": 1, "session_start_limit": limit}
            )
        if route == "POST /channels/{id}/messages":
            return _json(self._created(int(parts[1]), call.json or {}))
        if route == "PATCH /channels/{id}/messages/{id}":
            found = self.messages.get(int(parts[3]))
            if found is None:
                call.status = 404
                return _json(UNKNOWN_MESSAGE.body, 404)
            found.update(
                {
                    k: v
                    for k, v in (call.json or {}).items()
                    if k in ("content", "embeds", "components")
                }
            )
            return _json(found)
        if route in (
            "POST /channels/{id}/typing",
            "PUT /channels/{id}/messages/{id}/reactions/{emoji}/@me",
        ):
            call.status = 204
            return web.Response(status=204)
        if re.fullmatch(r"PUT /channels/\{id\}/messages/\{id\}/reactions/[^/]+/@me", route):
            call.status = 204
            return web.Response(status=204)
        if route == "POST /interactions/{id}/{token}/callback" or route.startswith(
            "POST /interactions/"
        ):
            return _json({"interaction": {"id": parts[1], "type": 3}})
        if route == "POST /webhooks/{id}/{token}":  # an interaction follow-up (not stored)
            payload = call.json or {}
            followup = _bot_message(next(self._ids), 0, payload)
            followup.update(flags=payload.get("flags") or 0, webhook_id=parts[1])
            return _json(followup)
        call.status = 404
        return _json({"message": f"fake: no route {route}", "code": 0}, 404)

    def _created(self, channel_id: int, payload: JSONDict) -> JSONDict:
        mid = next(self._ids)
        message = _bot_message(mid, channel_id, payload)
        if payload.get("message_reference"):
            message["message_reference"] = payload["message_reference"]
        guild_id = self._guild_of(channel_id)
        if guild_id is not None:
            message["guild_id"] = str(guild_id)
        self.messages[mid] = message
        self.created.append(message)
        return message

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await _send(socket, {"op": 10, "d": {"heartbeat_interval": self.heartbeat_ms}})
        session: Session | None = None
        async for frame in socket:
            if frame.type is not aiohttp.WSMsgType.TEXT:
                continue
            msg = json.loads(frame.data)
            op, data = msg.get("op"), msg.get("d")
            if op == 1:
                await _send(socket, {"op": 11})
            elif op == 2:
                session = await self._identify(socket, data)
            elif op == 6:
                session = await self._resume(socket, data)
        if session is not None and session.socket is socket:
            session.socket = None
        return socket

    async def _identify(self, socket: web.WebSocketResponse, data: JSONDict) -> Session | None:
        self.identifies.append(data)
        if data.get("token") != self.token:
            await socket.close(code=4004)
            return None
        if self.refuse_identify_with is not None:
            await socket.close(code=self.refuse_identify_with)
            return None
        session = Session(f"sess{next(self._sessions)}", data.get("shard") or [0, 1])
        self.sessions[session.id] = session
        ready = {
            "v": 10,
            "user": _user(BOT_ID, BOT_NAME, bot=True),
            "guilds": [{"id": str(g), "unavailable": True} for g in self.guilds],
            "session_id": session.id,
            "resume_gateway_url": "wss://gateway.discord.gg/",
            "shard": session.shard,
            "application": {"id": str(APP_ID), "flags": self.app_flags},
        }
        frames = [("READY", ready)] + [
            ("GUILD_CREATE", self._guild_payload(g)) for g in self.guilds.values()
        ]
        for event, payload in frames:
            session.seq += 1
            frame = {"op": 0, "t": event, "s": session.seq, "d": payload}
            session.log.append(frame)
            await _send(socket, frame)
        session.socket = socket
        return session

    async def _resume(self, socket: web.WebSocketResponse, data: JSONDict) -> Session | None:
        self.resumes.append(data)
        session = self.sessions.get(str(data.get("session_id")))
        if session is None or data.get("token") != self.token:
            await _send(socket, {"op": 9, "d": False})
            return None
        seen = int(data.get("seq") or 0) - self.resume_overlap
        for frame in session.log:
            if frame["s"] > seen:
                await _send(socket, frame)
        session.seq += 1
        resumed = {"op": 0, "t": "RESUMED", "s": session.seq, "d": {}}
        session.log.append(resumed)
        await _send(socket, resumed)
        session.socket = socket
        return session

    def _guild_of(self, channel_id: int) -> int | None:
        for guild in self.guilds.values():
            if channel_id in guild.channels or channel_id in guild.threads:
                return guild.id
        return None

    def _channel_payload(self, channel_id: int, guild_id: int | None) -> JSONDict:
        if guild_id is None:
            return {"id": str(channel_id), "type": 1, "recipients": []}
        guild = self.guilds[guild_id]
        return guild.channels.get(channel_id) or guild.threads[channel_id]

    def _guild_payload(self, guild: Guild) -> JSONDict:
        return {
            "id": str(guild.id),
            "name": guild.name,
            "unavailable": False,
            "member_count": 2,
            "large": False,
            "owner_id": "3000",
            "roles": [
                {
                    "id": str(guild.id),
                    "name": "@everyone",
                    "permissions": "0",
                    "position": 0,
                    "color": 0,
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                }
            ],
            "channels": list(guild.channels.values()),
            "threads": list(guild.threads.values()),
            "members": [],
            "emojis": [],
            "stickers": [],
            "features": [],
            "joined_at": _now(),
        }


async def _send(socket: web.WebSocketResponse, frame: JSONDict) -> None:
    if not socket.closed:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await socket.send_str(json.dumps(frame))


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        status=status,
        body=json.dumps(data).encode(),
        content_type="application/json",
        headers=headers,
    )


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


def _bot_message(message_id: int, channel_id: int, payload: JSONDict) -> JSONDict:
    """The Message object the bot's ``payload`` (content, embeds, components) became."""
    return {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "type": 0,
        "content": payload.get("content") or "",
        "author": _user(BOT_ID, BOT_NAME, bot=True),
        "timestamp": _now(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": payload.get("embeds") or [],
        "components": payload.get("components") or [],
        "pinned": False,
    }


def _user(user_id: int, name: str, *, bot: bool = False) -> JSONDict:
    user: JSONDict = {
        "id": str(user_id),
        "username": name,
        "discriminator": "0",
        "avatar": None,
        "global_name": name,
    }
    if bot:
        user["bot"] = True
    return user


def _member() -> JSONDict:
    return {"roles": [], "joined_at": _now(), "deaf": False, "mute": False, "flags": 0}


def _channel(
    channel_id: int, guild_id: int, kind: int, name: str, *, parent_id: int | None = None
) -> JSONDict:
    data: JSONDict = {
        "id": str(channel_id),
        "guild_id": str(guild_id),
        "type": kind,
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
    }
    if parent_id is not None:
        data["parent_id"] = str(parent_id)
    return data


def _application(flags: int) -> JSONDict:
    return {
        "id": str(APP_ID),
        "name": "fakeapp",
        "icon": None,
        "description": "",
        "bot_public": True,
        "bot_require_code_grant": False,
        "verify_key": "0" * 64,
        "flags": flags,
        "owner": _user(3000, "owner"),
        "approximate_guild_count": 1,
    }
