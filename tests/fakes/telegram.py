"""Fake Telegram Bot API on 127.0.0.1 for driving the real python-telegram-bot in tests.

It speaks the wire format PTB uses (form, multipart or JSON POSTs to ``/bot<token>/<method>``),
records every call, long-polls ``getUpdates``, pushes webhooks and injects faults that PTB maps
to its own exceptions. Point PTB at it with ``base_url``/``base_file_url`` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import ssl
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

from aiohttp import ClientSession, ClientTimeout, web

from tests.fakes.telegram_files import FileStore

TOKEN: Final = "123456:TEST-token-abcdefghijklmnop"
BOT_ID: Final = 123456
BOT_USERNAME: Final = "chatgate_test_bot"
BOT_FIRST_NAME: Final = "Chatgate"
FIRST_UPDATE_ID: Final = 1000
# Inbound (user) messages get their own per-chat range so they never collide with bot messages,
# whose ids start at 1 in every chat.
FIRST_INBOUND_MESSAGE_ID: Final = 10_001
MAX_TEXT_UTF16: Final = 4096

JSONDict = dict[str, Any]

# Form values that Telegram treats as strings even when they look like JSON ("42", "true").
_STRING_PARAM_NAMES: Final = (
    "text caption parse_mode callback_query_id inline_message_id secret_token url action emoji"
    " title description question business_connection_id message_effect_id"
)
_STRING_PARAMS: Final = frozenset(_STRING_PARAM_NAMES.split())
_JSON_SCALAR: Final = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false")
_CONFLICT_POLLING: Final = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)
_CONFLICT_WEBHOOK: Final = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)


@dataclass(frozen=True)
class Call:
    """One request the fake received: decoded params plus the raw form values as sent."""

    method: str
    params: dict[str, Any]
    token: str
    at: float
    content_type: str
    raw: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FaultSpec:
    """A canned failure for one call. A 2xx status only delays; the call is then served."""

    status: int
    description: str
    retry_after: int | None = None
    migrate_to_chat_id: int | None = None
    delay_s: float = 0.0
    drop_connection: bool = False


class _Unset(Enum):
    UNSET = 0


_UNSET: Final = _Unset.UNSET


class _ApiError(Exception):
    """Raised by method handlers; becomes a Telegram error body with a real HTTP status."""

    def __init__(self, status: int, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.description = description


class _DropConnection(Exception):
    """Raised by method handlers to close the connection without answering."""


class _Signal:
    """Wakes every current waiter each time it fires (an Event that re-arms itself)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, seconds: float | None) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), seconds)


class _CountingSite(web.BaseSite):
    """A loopback TCP site on an ephemeral port that reports every accepted connection."""

    def __init__(
        self,
        runner: web.BaseRunner,
        on_accept: Callable[[], None],
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(runner)
        self._on_accept = on_accept
        self._ssl_context = ssl_context
        self.port = 0

    @property
    def name(self) -> str:
        scheme = "https" if self._ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    async def start(self) -> None:
        await super().start()
        handler_factory = self._runner.server
        assert handler_factory is not None

        def accept() -> asyncio.BaseProtocol:
            self._on_accept()
            return handler_factory()

        server = await asyncio.get_running_loop().create_server(
            accept, "127.0.0.1", 0, ssl=self._ssl_context
        )
        self._server = server
        self.port = server.sockets[0].getsockname()[1]


def decode_form_value(name: str, value: str) -> Any:
    """Decode one form value the way PTB encoded it: JSON for non-strings, raw for strings."""
    if name in _STRING_PARAMS:
        return value
    stripped = value.strip()
    if stripped[:1] in ("{", "[") or _JSON_SCALAR.fullmatch(stripped):
        try:
            return json.loads(stripped)
        except ValueError:
            return value
    return value


async def _read_params(request: web.Request) -> tuple[JSONDict, dict[str, str]]:
    """Collect query, form, multipart or JSON parameters as (decoded, raw)."""
    params: JSONDict = {}
    raw: dict[str, str] = {}
    for key, query_value in request.query.items():
        raw[key], params[key] = query_value, decode_form_value(key, query_value)
    if request.content_type == "application/json":
        body = await request.read()
        data = json.loads(body) if body.strip() else {}
        if not isinstance(data, dict):
            raise ValueError("JSON body must be an object")
        for key, item in data.items():
            params[key] = item
            raw[key] = item if isinstance(item, str) else json.dumps(item)
    elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        for key, value in (await request.post()).items():
            if isinstance(value, web.FileField):
                upload = {"filename": value.filename, "content_type": value.content_type}
                params[key] = {**upload, "data": value.file.read()}
                raw[key] = value.filename
            else:
                text = value if isinstance(value, str) else bytes(value).decode()
                raw[key], params[key] = text, decode_form_value(key, text)
    return params, raw


def _json_response(status: int, payload: JSONDict) -> web.Response:
    # Exactly "application/json": web.json_response would append "; charset=utf-8".
    body = json.dumps(payload, ensure_ascii=False).encode()
    return web.Response(status=status, body=body, content_type="application/json")


def _ok(result: Any) -> web.Response:
    return _json_response(200, {"ok": True, "result": result})


def _error(status: int, description: str, parameters: JSONDict | None = None) -> web.Response:
    payload: JSONDict = {"ok": False, "error_code": status, "description": description}
    if parameters:
        payload["parameters"] = parameters
    return _json_response(status, payload)


def _drop(request: web.Request) -> web.StreamResponse:
    """Close the connection; aiohttp then discards the placeholder response."""
    if request.transport is not None:
        request.transport.close()
    return web.Response(status=204)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, the unit of Telegram entity offsets and lengths."""
    return len(text.encode("utf-16-le")) // 2


def _now() -> int:
    return int(time.time())


def _as_int(value: Any, name: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    raise _ApiError(400, f"Bad Request: invalid {name}")


def _chat_id(params: JSONDict) -> int:
    value = params.get("chat_id")
    if value is None:
        raise _ApiError(400, "Bad Request: chat_id is empty")
    try:
        return _as_int(value, "chat_id")
    except _ApiError:
        raise _ApiError(400, "Bad Request: chat not found") from None


def _user(
    user_id: int, *, first_name: str = "Alice", username: str | None = None, is_bot: bool = False
) -> JSONDict:
    user: JSONDict = {"id": user_id, "is_bot": is_bot, "first_name": first_name}
    if username:
        user["username"] = username
    return user


def bot_user() -> JSONDict:
    """The User object of the fake bot."""
    return _user(BOT_ID, first_name=BOT_FIRST_NAME, username=BOT_USERNAME, is_bot=True)


def _stub(message: JSONDict) -> JSONDict:
    """A message as embedded in another one: Telegram never nests replies twice."""
    return {k: v for k, v in message.items() if k != "reply_to_message"}


def _stand_in(
    chat: JSONDict, message_id: int, sender: JSONDict | None = None, **fields: Any
) -> JSONDict:
    """A message the fake never saw, for embedding as a reply target or callback source."""
    message: JSONDict = {"message_id": message_id, "date": _now(), "chat": dict(chat), **fields}
    if sender is not None:
        message["from"] = sender
    return message


def _inline_markup(params: JSONDict) -> JSONDict | None:
    markup = params.get("reply_markup")
    return markup if isinstance(markup, dict) and "inline_keyboard" in markup else None


def _checked_text(params: JSONDict) -> str:
    text = params.get("text")
    if not isinstance(text, str) or not text.strip():
        raise _ApiError(400, "Bad Request: message text is empty")
    # Markup is stripped by Telegram before counting; we cannot parse it, so only plain text.
    if params.get("parse_mode") is None and utf16_len(text) > MAX_TEXT_UTF16:
        raise _ApiError(400, "Bad Request: message is too long")
    return text


def _addressed(text: str, *, mention: bool, text_mention: bool) -> tuple[str, list[JSONDict]]:
    """Prefix the text with the requested references to the bot, with matching entities."""
    prefix, entities = "", []
    if mention:
        handle = f"@{BOT_USERNAME}"
        entities.append(
            {"type": "mention", "offset": utf16_len(prefix), "length": utf16_len(handle)}
        )
        prefix += handle + " "
    if text_mention:
        entities.append(
            {
                "type": "text_mention",
                "offset": utf16_len(prefix),
                "length": utf16_len(BOT_FIRST_NAME),
                "user": bot_user(),
            }
        )
        prefix += BOT_FIRST_NAME + " "
    return prefix + text, entities


class FakeTelegram:
    """An aiohttp Bot API server; see the module docstring. Use as ``async with FakeTelegram()``.

    With ``ssl_context`` (a server context, e.g. from a throwaway CA) it serves HTTPS and its
    URLs start with ``https://``; the client must trust that CA.
    """

    def __init__(self, token: str = TOKEN, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.token = token
        self.ssl_context = ssl_context
        self.port = 0
        self.calls: list[Call] = []
        self.sent: list[JSONDict] = []
        self.connection_attempts = 0
        self.refused_requests = 0
        self.get_updates_calls = 0
        self.max_in_flight: Counter[str] = (
            Counter()
        )  # most concurrent calls seen, per method (lower)
        self._in_flight: Counter[str] = Counter()
        self.refuse_connections = False
        self.conflict = False
        self.webhook_url: str | None = None
        self.webhook_secret: str | None = None
        self._stall = False
        self._token_revoked = False
        self._faults: dict[str, deque[FaultSpec]] = defaultdict(deque)
        self._updates: list[JSONDict] = []
        self._allowed_updates: frozenset[str] | None = None
        self._next_update_id = FIRST_UPDATE_ID
        self._chats: dict[int, JSONDict] = {}
        self._messages: dict[tuple[int, int], JSONDict] = {}
        self._bot_message_ids: dict[int, int] = defaultdict(int)
        self._inbound_ids: dict[int, int] = defaultdict(lambda: FIRST_INBOUND_MESSAGE_ID - 1)
        self._last_inbound: dict[tuple[int, int], int] = {}
        self._callback_seq = 0
        self._updates_signal = _Signal()
        self._calls_signal = _Signal()
        self._stall_signal = _Signal()
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._session: ClientSession | None = None
        self.files = FileStore()

    # lifecycle

    async def start(self) -> None:
        self._closing = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = _CountingSite(runner, self._count_connection, self.ssl_context)
        await site.start()
        self._runner, self.port = runner, site.port

    async def stop(self) -> None:
        self._closing.set()
        for signal in (self._updates_signal, self._calls_signal, self._stall_signal):
            signal.fire()
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegram:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        return f"{self._origin()}/bot"

    @property
    def base_file_url(self) -> str:
        return f"{self._origin()}/file/bot"

    def _origin(self) -> str:
        if not self.port:
            raise RuntimeError("FakeTelegram is not started")
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def _count_connection(self) -> None:
        self.connection_attempts += 1

    # modes and faults

    @property
    def stall_get_updates(self) -> bool:
        return self._stall

    @stall_get_updates.setter
    def stall_get_updates(self, value: bool) -> None:
        self._stall = value
        self._stall_signal.fire()

    def fail(self, method: str, spec: FaultSpec, times: int = 1) -> None:
        """Make the next `times` calls of `method` fail with `spec` (queued, consumed in order)."""
        self._faults[method.lower()].extend([spec] * times)

    def revoke_token(self) -> None:
        """Every later request with the current token gets 401 Unauthorized."""
        self._token_revoked = True

    def restore_token(self) -> None:
        """Accept the token again (the operator issued a fresh one with the same value)."""
        self._token_revoked = False

    # inbound updates

    def enqueue(self, update_body: JSONDict) -> JSONDict:
        """Queue an update for getUpdates, assigning the next update_id; returns it."""
        update = self._with_update_id(update_body)
        self._updates.append(update)
        self._updates_signal.fire()
        return update

    def dm(
        self,
        user_id: int,
        text: str,
        *,
        first_name: str = "Alice",
        username: str | None = None,
        is_bot: bool = False,
        language_code: str | None = None,
        date: int | None = None,
    ) -> JSONDict:
        """A private message; ``date`` (epoch seconds) backdates it, as a replayed backlog."""
        sender = _user(user_id, first_name=first_name, username=username, is_bot=is_bot)
        if language_code:
            sender["language_code"] = language_code
        chat = {k: v for k, v in sender.items() if k in ("id", "first_name", "username")}
        chat["type"] = "private"
        self._chats[user_id] = chat
        dated = {} if date is None else {"date": date}
        return self.enqueue({"message": self._inbound(chat, sender, text=text, **dated)})

    def group_message(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        mention: bool = False,
        reply_to_bot: bool = False,
        thread_id: int | None = None,
        chat_type: str = "supergroup",
        is_bot: bool = False,
        text_mention: bool = False,
    ) -> JSONDict:
        chat = self._chat(chat_id, chat_type, forum=thread_id is not None)
        full_text, entities = _addressed(text, mention=mention, text_mention=text_mention)
        fields: JSONDict = {"text": full_text}
        if entities:
            fields["entities"] = entities
        if thread_id is not None:
            fields.update(message_thread_id=thread_id, is_topic_message=True)
        if reply_to_bot:
            fields["reply_to_message"] = self._latest_bot_message(chat)
        sender = _user(user_id, is_bot=is_bot)
        return self.enqueue({"message": self._inbound(chat, sender, **fields)})

    def command(
        self,
        chat_id: int,
        user_id: int,
        command: str,
        *,
        chat_type: str = "private",
        addressed: bool = False,
        language_code: str | None = None,
    ) -> JSONDict:
        """A "/cmd [args]" message ("/cmd@<bot>" when addressed) with a bot_command entity."""
        head, sep, tail = command.lstrip("/").partition(" ")
        head = f"/{head}@{BOT_USERNAME}" if addressed else f"/{head}"
        entity = {"type": "bot_command", "offset": 0, "length": utf16_len(head)}
        chat = self._chat(chat_id, chat_type)
        sender = _user(user_id)
        if language_code:
            sender["language_code"] = language_code
        message = self._inbound(chat, sender, text=head + sep + tail, entities=[entity])
        return self.enqueue({"message": message})

    def callback(
        self, user_id: int, chat_id: int, message_id: int, data: str, *, chat_type: str = "private"
    ) -> JSONDict:
        """A button press on `message_id` (the stored bot message when the fake sent it)."""
        chat = self._chat(chat_id, chat_type)
        stored = self._messages.get((chat_id, message_id))
        message = _stub(stored) if stored else _stand_in(chat, message_id, bot_user())
        self._callback_seq += 1
        query = {
            "id": f"cbq-{self._callback_seq}",
            "from": _user(user_id),
            "chat_instance": f"ci{chat_id}",
            "data": data,
            "message": message,
        }
        return self.enqueue({"callback_query": query})

    def edited(self, chat_id: int, user_id: int, text: str) -> JSONDict:
        """An edit of the user's latest text message in the chat (or of a new one if none)."""
        chat = self._chat(chat_id)
        message_id = self._last_inbound.get((chat_id, user_id))
        original = self._messages.get((chat_id, message_id)) if message_id else None
        if original is None:
            original = self._inbound(chat, _user(user_id), text=text)
        message = {**_stub(original), "text": text, "edit_date": _now()}
        message.pop("entities", None)
        self._messages[(chat_id, message["message_id"])] = message
        return self.enqueue({"edited_message": message})

    def caption_message(self, user_id: int, caption: str) -> JSONDict:
        """A private photo message with a caption and no text."""
        chat = self._chat(user_id, "private")
        photo = [
            {"file_id": f"ph{user_id}-{n}", "file_unique_id": f"u{n}", "width": n, "height": n}
            for n in (90, 800)
        ]
        message = self._inbound(chat, _user(user_id), photo=photo, caption=caption)
        return self.enqueue({"message": message})

    def media_message(
        self, user_id: int, field_name: str, media: JSONDict, caption: str = ""
    ) -> JSONDict:
        """A private message carrying ``media`` under ``field_name`` (photo sizes, voice, ...)."""
        chat = self._chat(user_id, "private")
        extra: JSONDict = {"caption": caption} if caption else {}
        message = self._inbound(chat, _user(user_id), **{field_name: media}, **extra)
        return self.enqueue({"message": message})

    def group_media_message(
        self,
        chat_id: int,
        user_id: int,
        field_name: str,
        media: JSONDict | list[JSONDict],
        *,
        caption: str = "",
        mention: bool = False,
        album: str | None = None,
    ) -> JSONDict:
        """A group message carrying ``media``; its caption mentions the bot when asked, and it is
        a part of ``album`` (a media_group_id) when one is given."""
        chat = self._chat(chat_id, "supergroup")
        fields: JSONDict = {field_name: media}
        if caption or mention:
            fields["caption"], entities = _addressed(caption, mention=mention, text_mention=False)
            if entities:
                fields["caption_entities"] = entities
        if album is not None:
            fields["media_group_id"] = album
        return self.enqueue({"message": self._inbound(chat, _user(user_id), **fields)})

    # recorded traffic

    def calls_of(self, method: str) -> list[Call]:
        """Recorded calls of `method` (case-insensitive, like the Bot API)."""
        wanted = method.lower()
        return [call for call in self.calls if call.method.lower() == wanted]

    async def wait_for(
        self,
        method: str,
        count: int = 1,
        *,
        timeout: float = 5.0,
        where: Callable[[Call], bool] | None = None,
    ) -> list[Call]:
        """Return the matching calls once at least `count` exist; AssertionError on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            matches = [c for c in self.calls_of(method) if where is None or where(c)]
            remaining = deadline - loop.time()
            if len(matches) >= count:
                return matches
            if remaining <= 0 or self._closing.is_set():
                raise AssertionError(self._summary(method, count, len(matches), timeout))
            await self._calls_signal.wait(remaining)

    def _summary(self, method: str, count: int, found: int, timeout: float) -> str:
        recent = "\n".join(f"  {c.method} {c.params!r:.200}" for c in self.calls[-20:])
        return (
            f"expected {count} matching {method} call(s) within {timeout}s, found {found}; "
            f"{len(self.calls)} call(s) recorded, latest:\n{recent or '  (none)'}"
        )

    # webhook mode

    async def push_webhook(
        self, update_body: JSONDict, *, secret: str | _Unset | None = _UNSET
    ) -> int:
        """POST the update to webhook_url as Telegram does; returns the HTTP status."""
        if self.webhook_url is None:
            raise RuntimeError("no webhook set; call setWebhook first")
        header = self.webhook_secret if isinstance(secret, _Unset) else secret
        headers = {"Content-Type": "application/json"}
        if header is not None:
            headers["X-Telegram-Bot-Api-Secret-Token"] = header
        if self._session is None:
            self._session = ClientSession(timeout=ClientTimeout(total=10))
        body = json.dumps(self._with_update_id(update_body)).encode()
        async with self._session.post(self.webhook_url, data=body, headers=headers) as resp:
            await resp.read()
            return resp.status

    # HTTP side

    async def _download(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        ok = token == self.token and not self._token_revoked
        return self.files.download(ok, request.match_info["path"])

    async def _not_found(self, request: web.Request) -> web.Response:
        return _error(404, "Not Found")

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if self.refuse_connections:
            self.refused_requests += 1
            return _drop(request)
        token, method = request.match_info["token"], request.match_info["method"]
        try:
            params, raw = await _read_params(request)
        except ValueError:
            return _error(400, "Bad Request: can't parse request body")
        self._record(Call(method, params, token, time.monotonic(), request.content_type, raw))
        if token != self.token or self._token_revoked:
            return _error(401, "Unauthorized")
        name = method.lower()
        self._in_flight[name] += 1
        self.max_in_flight[name] = max(self.max_in_flight[name], self._in_flight[name])
        try:
            faults = self._faults.get(name)
            if faults:
                response = await self._apply_fault(request, faults.popleft())
                if response is not None:
                    return response
            return _ok(await self._dispatch(method.lower(), params))
        except _ApiError as exc:
            return _error(exc.status, exc.description)
        except _DropConnection:
            return _drop(request)
        finally:
            self._in_flight[name] -= 1

    def _record(self, call: Call) -> None:
        self.calls.append(call)
        if call.method.lower() == "getupdates":
            self.get_updates_calls += 1
        self._calls_signal.fire()

    async def _apply_fault(
        self, request: web.Request, fault: FaultSpec
    ) -> web.StreamResponse | None:
        if fault.delay_s > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), fault.delay_s)
        if fault.drop_connection:
            return _drop(request)
        if 200 <= fault.status < 300:
            return None
        parameters: JSONDict = {}
        if fault.retry_after is not None:
            parameters["retry_after"] = fault.retry_after
        if fault.migrate_to_chat_id is not None:
            parameters["migrate_to_chat_id"] = fault.migrate_to_chat_id
        return _error(fault.status, fault.description, parameters)

    async def _dispatch(self, method: str, params: JSONDict) -> Any:
        if method == "getupdates":
            return await self._get_updates(params)
        handlers: dict[str, Callable[[JSONDict], Any]] = {
            "getme": self._get_me,
            "sendmessage": self._send_message,
            "editmessagetext": self._edit_message_text,
            "setwebhook": self._set_webhook,
            "deletewebhook": self._delete_webhook,
            "getwebhookinfo": self._get_webhook_info,
            "getfile": self._get_file,
        }
        handler = handlers.get(method)
        if handler is not None:
            return handler(params)
        if method.startswith("send") and method != "sendchataction":
            return self._send_other(params)
        return True

    # Bot API methods

    def _get_file(self, params: JSONDict) -> JSONDict:
        try:
            return self.files.get_file(params)
        except (LookupError, OverflowError) as exc:
            raise _ApiError(400, str(exc)) from None

    def _get_me(self, params: JSONDict) -> JSONDict:
        return {
            **bot_user(),
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    async def _get_updates(self, params: JSONDict) -> list[JSONDict]:
        while self._stall and not self._closing.is_set():
            await self._stall_signal.wait(None)
        if self._closing.is_set():
            raise _DropConnection
        if self.conflict:
            raise _ApiError(409, _CONFLICT_POLLING)
        if self.webhook_url:
            raise _ApiError(409, _CONFLICT_WEBHOOK)
        offset = _as_int(params.get("offset") or 0, "offset")
        limit = min(max(_as_int(params.get("limit") or 100, "limit"), 1), 100)
        timeout = float(params.get("timeout") or 0)
        allowed = params.get("allowed_updates")
        if isinstance(allowed, list):
            self._allowed_updates = frozenset(allowed) or None
        if offset > 0:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        elif offset < 0:
            self._updates = self._updates[offset:]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            ready = [u for u in self._updates if self._is_allowed(u)][:limit]
            remaining = deadline - loop.time()
            if ready or remaining <= 0 or self._closing.is_set():
                return ready
            await self._updates_signal.wait(remaining)

    def _is_allowed(self, update: JSONDict) -> bool:
        allowed = self._allowed_updates
        return allowed is None or any(kind in allowed for kind in update if kind != "update_id")

    def _send_message(self, params: JSONDict) -> JSONDict:
        message = self._new_bot_message(params, text=_checked_text(params))
        if isinstance(params.get("entities"), list):
            message["entities"] = params["entities"]
        self.sent.append(message)
        return message

    def _send_other(self, params: JSONDict) -> JSONDict:
        """sendPhoto, sendDocument, ...: a bot message carrying the caption, if any."""
        caption = params.get("caption")
        return self._new_bot_message(params, **({"caption": caption} if caption else {}))

    def _new_bot_message(self, params: JSONDict, **fields: Any) -> JSONDict:
        chat = self._chat(_chat_id(params))
        chat_id = chat["id"]
        self._bot_message_ids[chat_id] += 1
        message: JSONDict = {
            "message_id": self._bot_message_ids[chat_id],
            "date": _now(),
            "chat": dict(chat),
            "from": bot_user(),
            **fields,
        }
        if params.get("message_thread_id") is not None:
            message["message_thread_id"] = params["message_thread_id"]
        reply_to = self._reply_target(params)
        if reply_to is not None:
            stored = self._messages.get((chat_id, reply_to))
            message["reply_to_message"] = _stub(stored) if stored else _stand_in(chat, reply_to)
        markup = _inline_markup(params)
        if markup is not None:
            message["reply_markup"] = markup
        self._messages[(chat_id, message["message_id"])] = message
        return message

    @staticmethod
    def _reply_target(params: JSONDict) -> int | None:
        reply = params.get("reply_parameters")
        if isinstance(reply, dict) and "message_id" in reply:
            return _as_int(reply["message_id"], "reply_parameters")
        if params.get("reply_to_message_id") is not None:
            return _as_int(params["reply_to_message_id"], "reply_to_message_id")
        return None

    def _edit_message_text(self, params: JSONDict) -> JSONDict | bool:
        if params.get("inline_message_id"):
            return True
        key = (_chat_id(params), _as_int(params.get("message_id"), "message_id"))
        message = self._messages.get(key)
        if message is None:
            raise _ApiError(400, "Bad Request: message to edit not found")
        if message.get("from", {}).get("id") != BOT_ID:
            raise _ApiError(400, "Bad Request: message can't be edited")
        text, markup = _checked_text(params), _inline_markup(params)
        entities = params.get("entities") if isinstance(params.get("entities"), list) else None
        message.update(text=text, edit_date=_now())
        for name, value in (("reply_markup", markup), ("entities", entities)):
            if value is None:
                message.pop(name, None)
            else:
                message[name] = value
        return message

    def _set_webhook(self, params: JSONDict) -> bool:
        url = params.get("url")
        if not url:
            return self._delete_webhook(params)
        self.webhook_url = str(url)
        secret = params.get("secret_token")
        self.webhook_secret = str(secret) if secret else None
        if params.get("drop_pending_updates"):
            self._updates.clear()
        return True

    def _delete_webhook(self, params: JSONDict) -> bool:
        self.webhook_url = self.webhook_secret = None
        if params.get("drop_pending_updates"):
            self._updates.clear()
        return True

    def _get_webhook_info(self, params: JSONDict) -> JSONDict:
        return {
            "url": self.webhook_url or "",
            "has_custom_certificate": False,
            "pending_update_count": len(self._updates),
        }

    # chats and messages

    def _with_update_id(self, body: JSONDict) -> JSONDict:
        update_id = self._next_update_id
        self._next_update_id += 1
        return {"update_id": update_id, **{k: v for k, v in body.items() if k != "update_id"}}

    def _chat(self, chat_id: int, chat_type: str | None = None, *, forum: bool = False) -> JSONDict:
        """The known chat (re-typed if `chat_type` differs), else one inferred from the id:
        positive private, negative supergroup. Chats are remembered so replies match them."""
        known = self._chats.get(chat_id)
        if known is not None and chat_type in (None, known["type"]) and not forum:
            return known
        kind = chat_type or ("private" if chat_id > 0 else "supergroup")
        chat: JSONDict = {"id": chat_id, "type": kind}
        if kind == "private":
            chat["first_name"] = "Alice"
        else:
            chat["title"] = f"Test group {chat_id}"
        if forum:
            chat["is_forum"] = True
        self._chats[chat_id] = chat
        return chat

    def _inbound(self, chat: JSONDict, sender: JSONDict, **fields: Any) -> JSONDict:
        chat_id = chat["id"]
        self._inbound_ids[chat_id] += 1
        message_id = self._inbound_ids[chat_id]
        message = {"message_id": message_id, "date": _now(), "chat": dict(chat), "from": sender}
        message.update(fields)
        self._messages[(chat_id, message_id)] = message
        if "text" in fields:
            self._last_inbound[(chat_id, sender["id"])] = message_id
        return message

    def _latest_bot_message(self, chat: JSONDict) -> JSONDict:
        """The bot's latest message in the chat, or a stand-in with the first bot message id."""
        chat_id = chat["id"]
        latest = self._messages.get((chat_id, self._bot_message_ids[chat_id]))
        return _stub(latest) if latest else _stand_in(chat, 1, bot_user(), text="an earlier reply")
