"""Fake Slack platform on 127.0.0.1 for driving the real slack_sdk / slack_bolt in tests.

One aiohttp server serves the Web API at ``/api/{method}`` (JSON, form or query params,
``Authorization: Bearer``), Socket Mode at ``/link/`` (see ``slack_socket``) and the
``response_url`` of interactions at ``/response/{key}`` (recorded as method "response_url").
It records every call, enforces Slack's message limits, injects faults per method (optionally
per channel) and pushes signed Events API / interactivity requests to an app's HTTP endpoint.
Point the SDKs at it only through public config::

    client = AsyncWebClient(token=BOT_TOKEN, base_url=fake.api_url, session=session)
    app = AsyncApp(client=client, signing_secret=SIGNING_SECRET)
    handler = AsyncSocketModeHandler(app, app_token=APP_TOKEN, ping_interval=0.3)

Errors follow Slack: HTTP 200 with ``{"ok": false, "error": ...}`` (exact
``application/json``, or slack_sdk loses ``error``), 429 + ``Retry-After`` for rate limits.
A small ``ping_interval`` matters: the SDK notices a dead socket only on its monitor tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from aiohttp import web

from tests.fakes.slack_files import SlackFiles
from tests.fakes.slack_socket import (
    APP_ID,
    APP_TOKEN,
    BOT_ID,
    BOT_NAME,
    BOT_TOKEN,
    BOT_USER_ID,
    SIGNING_SECRET,
    TEAM_DOMAIN,
    TEAM_ID,
    TEAM_NAME,
    Ack,
    Envelope,
    JSONDict,
    Signal,
    SlackInbound,
    SocketConnection,
    sign,
    wait_until,
)

__all__ = [
    "APP_TOKEN",
    "BOT_TOKEN",
    "BOT_USER_ID",
    "SIGNING_SECRET",
    "TEAM_ID",
    "Ack",
    "Call",
    "Envelope",
    "FakeSlack",
    "FaultSpec",
    "SocketConnection",
    "sign",
]

MAX_TEXT: Final = 40_000
MAX_BLOCKS: Final = 50
MAX_SECTION_TEXT: Final = 3_000
MAX_FIELD_TEXT: Final = 2_000
MAX_HEADER_TEXT: Final = 150
_JSON_FIELDS: Final = ("blocks", "attachments", "metadata")


@dataclass
class Call:
    """One Web API request: params merged from query and body; outcome filled once answered."""

    method: str
    params: JSONDict
    token: str
    at: float
    content_type: str
    http_verb: str
    status: int = 0
    error: str | None = None


@dataclass(frozen=True)
class FaultSpec:
    """A canned failure. ``error=None`` only delays, then the call is served normally."""

    error: str | None = "channel_not_found"
    status: int = 200
    retry_after: int | None = None
    delay_s: float = 0.0
    drop_connection: bool = False
    channel: str | None = None


class _ApiError(Exception):
    def __init__(self, error: str, status: int = 200, **extra: Any) -> None:
        super().__init__(error)
        self.error, self.status, self.extra = error, status, extra
        self.headers: dict[str, str] = {}


class _Drop(Exception):
    """Close the connection without answering."""


def _json_response(status: int, payload: JSONDict, headers: dict[str, str]) -> web.Response:
    # Exactly "application/json": web.json_response would append "; charset=utf-8".
    body = json.dumps(payload, ensure_ascii=False).encode()
    return web.Response(status=status, body=body, content_type="application/json", headers=headers)


async def _read_params(request: web.Request) -> JSONDict:
    """Query, then JSON or form body; JSON-valued form fields (blocks, ...) are decoded."""
    params: JSONDict = dict(request.query)
    if request.content_type == "application/json":
        raw = await request.read()
        data = json.loads(raw) if raw.strip() else {}
        if not isinstance(data, dict):
            raise ValueError("JSON body must be an object")
        params.update(data)
    elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        for key, value in (await request.post()).items():
            params[key] = value if isinstance(value, str) else getattr(value, "filename", "")
    for key in _JSON_FIELDS:
        if isinstance(params.get(key), str):
            with contextlib.suppress(ValueError):
                params[key] = json.loads(params[key])
    return params


def _block_errors(blocks: list[Any]) -> list[str]:
    """Slack's block-kit limits that chat adapters hit in practice, as Slack words them."""
    if len(blocks) > MAX_BLOCKS:
        return [f"no more than {MAX_BLOCKS} items allowed [json-pointer:/blocks]"]
    errors: list[str] = []
    for i, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind is None:
            errors.append(f"missing required field: type [json-pointer:/blocks/{i}]")
            continue
        limit = {"section": MAX_SECTION_TEXT, "header": MAX_HEADER_TEXT}.get(kind)
        text = block.get("text", {}).get("text") if isinstance(block.get("text"), dict) else None
        if limit and isinstance(text, str) and len(text) > limit:
            pointer = f"/blocks/{i}/text/text"
            errors.append(f"must be less than {limit + 1} characters [json-pointer:{pointer}]")
        for j, item in enumerate(block.get("fields") or []):
            if len(str(item.get("text", ""))) > MAX_FIELD_TEXT:
                pointer = f"/blocks/{i}/fields/{j}/text"
                errors.append(
                    f"must be less than {MAX_FIELD_TEXT + 1} characters [json-pointer:{pointer}]"
                )
    return errors


class FakeSlack(SlackInbound):
    """Fake Slack Web API + Socket Mode + Events API pusher; ``async with FakeSlack() as fake``.

    `known_channels=None` accepts any channel id; otherwise others get ``channel_not_found``.
    Unacked Socket Mode envelopes are redelivered on reconnect unless `redeliver_unacked=False`.
    """

    def __init__(
        self,
        *,
        bot_tokens: Iterable[str] = (BOT_TOKEN,),
        app_token: str = APP_TOKEN,
        known_channels: Iterable[str] | None = None,
        redeliver_unacked: bool = True,
        redelivery_reason: str = "timeout",
    ) -> None:
        super().__init__(
            app_id=APP_ID,
            redeliver_unacked=redeliver_unacked,
            redelivery_reason=redelivery_reason,
        )
        self.bot_tokens = set(bot_tokens)
        self.app_token = app_token
        self.known_channels = None if known_channels is None else set(known_channels)
        self._calls: list[Call] = []
        self._posted: list[JSONDict] = []
        self._updates: list[JSONDict] = []
        self.ephemerals: list[JSONDict] = []  # chat.postEphemeral calls, in order
        self._deletes: list[JSONDict] = []
        self._reactions: dict[tuple[str, str, str], str] = {}  # (channel, ts, name) -> user
        self._uploads: dict[str, JSONDict] = {}  # file id -> {filename, length, data}
        self.shared_files: list[JSONDict] = []  # completed uploads: file + channel/thread/comment
        self._users: dict[str, JSONDict] = {}
        self._revoked: dict[str, str] = {}
        self._faults: dict[str, list[FaultSpec]] = defaultdict(list)
        self._signal = Signal()
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.files = SlackFiles(lambda: self.bot_tokens, lambda: f"http://127.0.0.1:{self.port}")

    # lifecycle

    async def start(self) -> None:
        self._closing = asyncio.Event()
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle)
        app.router.add_get("/link/", self._handle_link)
        app.router.add_post("/response/{key}", self._handle_response_url)
        self.files.install(app)
        app.router.add_post("/upload/{file_id}", self._handle_upload)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        self._runner, self.port = runner, runner.addresses[0][1]

    async def stop(self) -> None:
        self._closing.set()
        self._signal.fire()
        await self._close_inbound()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSlack:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def api_url(self) -> str:
        """``base_url`` for AsyncWebClient (slack_sdk urljoins the method onto it)."""
        if not self.port:
            raise RuntimeError("FakeSlack is not started")
        return f"http://127.0.0.1:{self.port}/api/"

    # configuration and faults

    def add_channel(
        self, channel_id: str, *, is_im: bool | None = None, is_archived: bool = False, **extra: Any
    ) -> JSONDict:
        """Register (or replace) a channel for conversations.info; it becomes known."""
        info = {**self._channel_info(channel_id), "is_archived": is_archived, **extra}
        if is_im is not None:
            info.update(is_im=is_im, is_channel=not is_im, is_private=is_im)
        self._channels[channel_id] = info
        if self.known_channels is not None:
            self.known_channels.add(channel_id)
        return info

    def add_user(self, user_id: str, **fields: Any) -> JSONDict:
        """Register (or replace) a users.info entry; `fields` override the synthesised ones."""
        self._users[user_id] = {**self._user_info(user_id), **fields}
        return self._users[user_id]

    def revoke_token(self, token: str | None = None, error: str = "token_revoked") -> None:
        """Later calls with `token` (default: every bot token) fail with `error`."""
        for revoked in [token] if token else self.bot_tokens:
            self._revoked[revoked] = error

    def fail(
        self,
        method: str,
        error: str | None = "channel_not_found",
        status: int = 200,
        *,
        retry_after: int | None = None,
        delay_s: float = 0.0,
        drop_connection: bool = False,
        channel: str | None = None,
        times: int = 1,
    ) -> FaultSpec:
        """Queue a fault for the next `times` calls of `method` (FIFO; `channel` narrows it)."""
        spec = FaultSpec(error, status, retry_after, delay_s, drop_connection, channel)
        self._faults[method].extend([spec] * times)
        return spec

    def rate_limit(self, method: str, retry_after: int = 1, *, times: int = 1) -> FaultSpec:
        """429 + ``Retry-After`` + ``{"ok": false, "error": "ratelimited"}``."""
        return self.fail(method, "ratelimited", 429, retry_after=retry_after, times=times)

    def delay(self, method: str, seconds: float, *, times: int = 1) -> FaultSpec:
        """Answer the next call(s) normally but only after `seconds`."""
        return self.fail(method, None, delay_s=seconds, times=times)

    def drop_connection(self, method: str, *, times: int = 1) -> FaultSpec:
        """Close the TCP connection instead of answering."""
        return self.fail(method, None, drop_connection=True, times=times)

    # recorded traffic

    def calls(self, method: str | None = None) -> list[Call]:
        """Every recorded request (of `method`), failed ones included, oldest first."""
        return [c for c in self._calls if method is None or c.method == method]

    async def wait_calls(
        self,
        method: str,
        n: int = 1,
        timeout: float = 5.0,
        where: Callable[[Call], bool] | None = None,
    ) -> list[Call]:
        """The matching calls once at least `n` exist; AssertionError listing traffic on timeout."""

        def probe() -> list[Call] | None:
            found = [c for c in self.calls(method) if where is None or where(c)]
            return found if len(found) >= n else None

        return await wait_until(self._signal, probe, timeout, lambda: self._summary(method, n))

    def posted(self, channel: str | None = None, thread_ts: str | None = None) -> list[JSONDict]:
        """Messages as chat.postMessage stored them (snapshots: later edits not applied)."""
        return [
            m
            for m in self._posted
            if channel in (None, m["channel"]) and thread_ts in (None, m.get("thread_ts"))
        ]

    async def wait_posts(
        self, n: int = 1, timeout: float = 5.0, channel: str | None = None
    ) -> list[JSONDict]:
        """The posts (in `channel`) once at least `n` exist; AssertionError on timeout."""

        def probe() -> list[JSONDict] | None:
            found = self.posted(channel)
            return found if len(found) >= n else None

        summary = self._summary
        return await wait_until(
            self._signal, probe, timeout, lambda: summary("chat.postMessage", n)
        )

    def updates(self, channel: str | None = None, ts: str | None = None) -> list[JSONDict]:
        """Successful chat.update calls as {channel, ts, text, blocks}."""
        return [
            u for u in self._updates if channel in (None, u["channel"]) and ts in (None, u["ts"])
        ]

    def deletes(self, channel: str | None = None) -> list[JSONDict]:
        """Successful chat.delete calls as {channel, ts}."""
        return [d for d in self._deletes if channel in (None, d["channel"])]

    def reactions(self, channel: str | None = None, ts: str | None = None) -> list[JSONDict]:
        """Reactions currently present, in the order they were added."""
        return [
            {"channel": c, "ts": t, "name": n, "user": u}
            for (c, t, n), u in self._reactions.items()
            if channel in (None, c) and ts in (None, t)
        ]

    def message(self, channel: str, ts: str) -> JSONDict | None:
        """Current state of a stored message (bot posts and builder-made inbound ones)."""
        return self._messages.get((channel, ts))

    def _summary(self, method: str, n: int) -> str:
        recent = "\n".join(
            f"  {c.method} {c.status} {c.error or ''} {c.params!r:.160}" for c in self._calls[-15:]
        )
        return f"expected {n} {method} call(s); latest traffic:\n{recent or '  (none)'}"

    # Web API

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        try:
            params, bad_body = await _read_params(request), False
        except ValueError:
            params, bad_body = {}, True
        header = request.headers.get("Authorization", "")
        token = header.removeprefix("Bearer ").strip() or str(params.pop("token", "") or "")
        params.pop("token", None)
        call = Call(method, params, token, time.monotonic(), request.content_type, request.method)
        self._calls.append(call)
        try:
            if bad_body:
                raise _ApiError("invalid_json")
            self._check_token(method, token)
            fault = self._take_fault(method, params)
            if fault is not None:
                await self._apply_fault(fault)
            result = self._dispatch(method, params)
            call.status = 200
            return _json_response(200, {"ok": True, **result}, {})
        except _ApiError as exc:
            call.status, call.error = exc.status, exc.error
            payload = {"ok": False, "error": exc.error, **exc.extra}
            return _json_response(exc.status, payload, exc.headers)
        except _Drop:
            call.error = "dropped"
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=204)  # discarded: the transport is gone
        finally:
            self._signal.fire()

    async def _handle_response_url(self, request: web.Request) -> web.Response:
        """Bolt's ``respond()`` POSTs JSON to the payload's response_url: record it as a call."""
        try:
            params = await _read_params(request)
        except ValueError:
            params = {}
        params["response_url"] = str(request.url)
        now = time.monotonic()
        self._calls.append(Call("response_url", params, "", now, request.content_type, "POST", 200))
        self._signal.fire()
        return _json_response(200, {"ok": True}, {})

    async def _handle_upload(self, request: web.Request) -> web.Response:
        """files_upload_v2 step 2: the bytes, POSTed to the URL step 1 handed out."""
        upload = self._uploads.get(request.match_info["file_id"])
        if upload is None:
            return web.Response(status=404, text="unknown upload")
        upload["data"] = await request.read()
        return web.Response(status=200, text="OK - " + str(len(upload["data"])))

    def _get_upload_url(self, params: JSONDict) -> JSONDict:
        file_id = f"F{len(self._uploads) + 1:08d}"
        self._uploads[file_id] = {
            "filename": params.get("filename"),
            "length": int(params.get("length") or 0),
            "data": None,
        }
        return {"file_id": file_id, "upload_url": f"http://127.0.0.1:{self.port}/upload/{file_id}"}

    def _complete_upload(self, params: JSONDict) -> JSONDict:
        raw = params.get("files")
        items = json.loads(raw) if isinstance(raw, str) else raw
        done = []
        for item in items or []:
            upload = self._uploads.get(str(item.get("id")))
            if upload is None or upload["data"] is None:
                raise _ApiError("file_not_found")
            if len(upload["data"]) != upload["length"]:
                raise _ApiError("file_size_mismatch")
            self.shared_files.append(
                {
                    "id": item["id"],
                    "title": item.get("title"),
                    "filename": upload["filename"],
                    "data": upload["data"],
                    "channel": params.get("channel_id"),
                    "thread_ts": params.get("thread_ts"),
                    "initial_comment": params.get("initial_comment"),
                }
            )
            done.append({"id": item["id"], "title": item.get("title"), "name": upload["filename"]})
        return {"files": done}

    def _check_token(self, method: str, token: str) -> None:
        if not token:
            raise _ApiError("not_authed")
        if token in self._revoked:
            raise _ApiError(self._revoked[token])
        valid = {self.app_token} if method == "apps.connections.open" else self.bot_tokens
        if token in valid:
            return
        known = token == self.app_token or token in self.bot_tokens
        raise _ApiError("not_allowed_token_type" if known else "invalid_auth")

    def _take_fault(self, method: str, params: JSONDict) -> FaultSpec | None:
        queue = self._faults.get(method, [])
        for i, spec in enumerate(queue):
            if spec.channel is None or spec.channel == params.get("channel"):
                return queue.pop(i)
        return None

    async def _apply_fault(self, spec: FaultSpec) -> None:
        if spec.delay_s > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), spec.delay_s)
        if spec.drop_connection:
            raise _Drop
        if spec.error is not None:
            error = _ApiError(spec.error, spec.status)
            if spec.retry_after is not None:
                error.headers["Retry-After"] = str(spec.retry_after)
            raise error

    def _dispatch(self, method: str, params: JSONDict) -> JSONDict:
        handlers: dict[str, Callable[[JSONDict], JSONDict]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.delete": self._delete,
            "chat.postEphemeral": self._post_ephemeral,
            "reactions.add": self._reaction_add,
            "reactions.remove": self._reaction_remove,
            "apps.connections.open": self._connections_open,
            "conversations.info": lambda p: {"channel": self._channel_info(self._channel(p))},
            "users.info": self._users_info,
            "files.getUploadURLExternal": self._get_upload_url,
            "files.completeUploadExternal": self._complete_upload,
        }
        handler = handlers.get(method)
        return handler(params) if handler else {}

    def _auth_test(self, params: JSONDict) -> JSONDict:
        return {
            "url": f"https://{TEAM_DOMAIN}.slack.com/",
            "team": TEAM_NAME,
            "user": BOT_NAME,
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _connections_open(self, params: JSONDict) -> JSONDict:
        return {"url": f"ws://127.0.0.1:{self.port}/link/?ticket={self.issue_ticket()}"}

    def _channel(self, params: JSONDict) -> str:
        channel = str(params.get("channel") or "")
        if not channel or (self.known_channels is not None and channel not in self.known_channels):
            raise _ApiError("channel_not_found")
        return channel

    def _channel_info(self, channel: str) -> JSONDict:
        if channel in self._channels:
            return copy.deepcopy(self._channels[channel])
        kind = channel[:1]
        info: JSONDict = {"id": channel, "name": f"chan-{channel.lower()}", "created": 1700000000}
        info.update(is_channel=kind == "C", is_group=kind == "G", is_im=kind == "D")
        info.update(is_mpim=False, is_private=kind in ("G", "D"), is_archived=False)
        info.update(is_member=True, context_team_id=TEAM_ID)
        if kind == "D":
            info.update(user="U42", name=None)
        return info

    def _user_info(self, user: str) -> JSONDict:
        is_bot = user == BOT_USER_ID
        name = BOT_NAME if is_bot else f"user-{user.lower()}"
        profile = {"display_name": name, "real_name": name.title(), "team": TEAM_ID}
        if is_bot:
            profile["bot_id"] = BOT_ID
        fields = {"id": user, "team_id": TEAM_ID, "name": name, "real_name": name.title()}
        fields["locale"] = "en-US"
        return {**fields, "is_bot": is_bot, "deleted": False, "tz": "UTC", "profile": profile}

    def _users_info(self, params: JSONDict) -> JSONDict:
        """As Slack: the user's ``locale`` only when asked with ``include_locale=true``."""
        user = str(params.get("user") or "")
        if user in self._users:
            info = copy.deepcopy(self._users[user])
        elif not user.startswith(("U", "W")):
            raise _ApiError("user_not_found")
        else:
            info = self._user_info(user)
        if str(params.get("include_locale")).lower() not in ("true", "1"):
            info.pop("locale", None)
        return {"user": info}

    def _content(self, params: JSONDict) -> tuple[str, list[Any] | None]:
        text, blocks = params.get("text"), params.get("blocks")
        if blocks is not None and not isinstance(blocks, list):
            raise _ApiError("invalid_blocks_format")
        if not text and not blocks and not params.get("attachments"):
            raise _ApiError("no_text")
        text = str(text or "")
        if len(text) > MAX_TEXT:
            raise _ApiError("msg_too_long")
        errors = _block_errors(blocks or [])
        if errors:
            raise _ApiError("invalid_blocks", errors=errors)
        return text, blocks

    def _post_message(self, params: JSONDict) -> JSONDict:
        channel = self._channel(params)
        if self._channel_info(channel).get("is_archived"):
            raise _ApiError("is_archived")
        text, blocks = self._content(params)
        ts = self.next_ts(channel)
        message: JSONDict = {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID}
        message.update(app_id=self.app_id, team=TEAM_ID, text=text, ts=ts)
        for key in ("thread_ts", "metadata", "attachments"):
            if params.get(key):
                message[key] = str(params[key]) if key == "thread_ts" else params[key]
        if blocks is not None:
            message["blocks"] = blocks
        self._messages[(channel, ts)] = message
        self._posted.append({"channel": channel, **copy.deepcopy(message)})
        return {"channel": channel, "ts": ts, "message": copy.deepcopy(message)}

    def _post_ephemeral(self, params: JSONDict) -> JSONDict:
        """A message only ``user`` sees: kept apart from the posts (it is never stored)."""
        channel = self._channel(params)
        if not params.get("user"):
            raise _ApiError("user_not_in_channel")
        self.ephemerals.append({"channel": channel, **copy.deepcopy(params)})
        return {"message_ts": self.next_ts(channel)}

    def _own_message(self, params: JSONDict, denied: str) -> tuple[str, str, JSONDict]:
        """The bot's own stored message addressed by channel + ts (others can't be changed)."""
        channel, ts = self._channel(params), str(params.get("ts") or "")
        message = self._messages.get((channel, ts))
        if message is None:
            raise _ApiError("message_not_found")
        if message.get("user") != BOT_USER_ID:
            raise _ApiError(denied)
        return channel, ts, message

    def _update(self, params: JSONDict) -> JSONDict:
        channel, ts, message = self._own_message(params, "cant_update_message")
        text, blocks = self._content(params)
        if "text" in params:
            message["text"] = text
        if blocks:
            message["blocks"] = blocks
        elif "blocks" in params:
            message.pop("blocks", None)
        message["edited"] = {"user": BOT_USER_ID, "ts": f"{time.time():.6f}"}
        self._updates.append({"channel": channel, "ts": ts, "text": text, "blocks": blocks})
        return {"channel": channel, "ts": ts, "text": text, "message": copy.deepcopy(message)}

    def _delete(self, params: JSONDict) -> JSONDict:
        channel, ts, _ = self._own_message(params, "cant_delete_message")
        del self._messages[(channel, ts)]
        self._deletes.append({"channel": channel, "ts": ts})
        return {"channel": channel, "ts": ts}

    def _reaction_key(self, params: JSONDict) -> tuple[str, str, str]:
        """Reactions on messages the fake never saw are accepted (inbound events are often raw)."""
        channel, ts = self._channel(params), str(params.get("timestamp") or "")
        name = str(params.get("name") or "")
        if not ts:
            raise _ApiError("no_item_specified")
        if not name:
            raise _ApiError("invalid_name")
        return channel, ts, name

    def _reaction_add(self, params: JSONDict) -> JSONDict:
        key = self._reaction_key(params)
        if key in self._reactions:
            raise _ApiError("already_reacted")
        self._reactions[key] = BOT_USER_ID
        return {}

    def _reaction_remove(self, params: JSONDict) -> JSONDict:
        key = self._reaction_key(params)
        if self._reactions.pop(key, None) is None:
            raise _ApiError("no_reaction")
        return {}
