"""The web chat channel adapter: a page and a JSON/SSE API below `channels.webchat.path`.

    GET  {path}               the page          GET  {path}/static/NAME  its script and style
    GET  {path}/api/session   who am I          POST {path}/api/session  sign in (cookie)
    GET  {path}/api/events    SSE: replay + live messages, typing
    POST {path}/api/send      {client_id, text | choice+label, agent?, attachments?: [upload ids]}
    POST {path}/api/upload    multipart `file` → {upload_id, ...} (SQLite state only)

A browser session is one direct chat: its id (from the signed cookie) is the chat and sender id,
and its messages walk the same journal → admission → turn → delivery path as any DM. The
browser's `client_id` makes a resent message idempotent (the journal dedupes it). Writes need the
CSRF token from `GET api/session` in `X-CSRF-Token`, the cookie is SameSite=Strict, and requests
from another origin are refused.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from chatgate import tracing
from chatgate.channels.base import (
    ChannelAdapter,
    ChannelContext,
    InboundSink,
    NotConfigured,
    Rendered,
)
from chatgate.channels.capabilities import AckMode, Capabilities
from chatgate.channels.http_ingress import refuse
from chatgate.channels.webchat import AGENT_ROUTE, LIMITS
from chatgate.channels.webchat.config import WebChatChannelConfig
from chatgate.channels.webchat.hub import Hub, serve_events
from chatgate.channels.webchat.identity import (
    Signer,
    load_install_key,
    new_session_id,
    valid_session_id,
)
from chatgate.channels.webchat.outbox import MessageLog, Outbox, SharedWebChat
from chatgate.channels.webchat.personal import WebChatData
from chatgate.channels.webchat.render import render
from chatgate.channels.webchat.uploads import UploadStore, receive
from chatgate.channels.webui import StaticAssets, json_answer, same_origin
from chatgate.config.base import secret_value
from chatgate.http_input import BadInput, read_json
from chatgate.model.errors import FetchError, StateUnavailable
from chatgate.model.messages import Attachment, InboundMessage, SendResult, Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import MediaReason, SendErrorKind
from chatgate.secure_compare import secure_equals
from chatgate.state.factory import SHARED_KV
from chatgate.state.personal import PersonalData

if TYPE_CHECKING:
    from chatgate.state.redis.client import RedisShare

log = logging.getLogger("chatgate.webchat")
TYPING_EVERY_S = 3.0
MAX_BODY = 256 * 1024
BAD_TOKEN_DELAY_S = 0.5
_CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{8,64}\Z")
MAX_FILES_PER_SEND = 10
NO_UPLOADS_REPLICAS = "file uploads are off with the Redis state backend (replicas)"
_ASSETS: StaticAssets | None = None


def assets() -> StaticAssets:
    global _ASSETS
    if _ASSETS is None:
        _ASSETS = StaticAssets("chatgate.channels.webchat")
    return _ASSETS


class WebChatChannel(ChannelAdapter):
    platform = "webchat"

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: WebChatChannelConfig = ctx.config
        self.hub = Hub(self.config.max_streams)
        self.outbox: MessageLog | None = None
        self._sink: InboundSink | None = None
        self._signer: Signer | None = None
        self._mounted: str | None = None
        self._accepting = False
        self._capabilities: tuple[WebChatChannelConfig, Capabilities] | None = None
        self.uploads: UploadStore | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self.clock = time.time  # the upload TTL's clock; tests move it

    @property
    def capabilities(self) -> Capabilities:
        config = self.config
        cached = self._capabilities
        if cached is None or cached[0] is not config:
            cached = self._capabilities = (
                config,
                Capabilities(
                    limits=LIMITS,
                    edits=True,
                    ack=AckMode.TYPING,
                    typing_every_s=TYPING_EVERY_S,
                    stream=config.stream.enabled,
                    min_edit_interval_s=config.stream.min_edit_interval_s,
                ),
            )
        return cached[1]

    @property
    def cookie_name(self) -> str:
        return "chatgate_" + re.sub(r"[^A-Za-z0-9_]", "_", self.name)

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self, sink: InboundSink) -> None:
        config = self.config
        token = secret_value(config.token)
        if config.auth == "token" and token is None:
            raise NotConfigured(
                "auth: token needs a token",
                f"set channels.{self.name}.token (or token_file), or auth: open on loopback",
            )
        self._sink = sink
        self.hub = Hub(config.max_streams)
        shared = self._shared_store()
        outbox: MessageLog
        if shared is None:
            key = await asyncio.to_thread(load_install_key, self.ctx.state_dir)
            outbox = Outbox(
                self.ctx.state_dir / "webchat" / f"{self.name}.db",
                keep=config.history,
                max_age_s=config.session_max_age_s,
                publish=self.hub.publish,
                typing=self.hub.typing,
            )
        else:  # replicas: any of them serves any browser
            key = await shared.install_key()
            outbox = shared.outbox(
                self.name,
                keep=config.history,
                max_age_s=config.session_max_age_s,
                publish=self.hub.publish,
                typing=self.hub.typing,
                resync=self.hub.close_all,
            )
        self.uploads = None
        if shared is None and config.max_upload_bytes > 0:
            self.uploads = UploadStore(
                self.ctx.state_dir / "webchat" / f"{self.name}-uploads",
                ttl_s=config.upload_ttl_s,
                max_bytes=config.max_upload_bytes,
                clock=lambda: self.clock(),
            )
            await self.uploads.open()
            self._sweeper = asyncio.create_task(self.uploads.sweep_forever())
        self._signer = Signer.derive(key, self.name, token if config.auth == "token" else None)
        await outbox.open(time.time())
        self.outbox = outbox
        assets()  # read the page once, before the first visitor
        self._mounted = config.path
        for method in ("GET", "POST"):
            self.ctx.http.add(method, config.path, self._dispatch, prefix=True)
        self._accepting = True
        log.info("web chat serving", extra={"path": config.path, "auth": config.auth})

    def _shared_store(self) -> SharedWebChat | None:
        """With replicas (a Redis store), the outboxes live on Redis so any replica serves any
        browser; else None (this replica's own SQLite outbox)."""
        share: RedisShare | None = self.ctx.kv.get(SHARED_KV)
        if share is None:
            return None
        from chatgate.channels.webchat.store_redis import RedisWebChat

        return RedisWebChat(share.client, share.keys)

    async def stop_intake(self) -> None:
        self._accepting = False

    async def stop(self) -> None:
        self._accepting = False
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        if self._mounted is not None:
            self.ctx.http.remove(self._mounted)
            self._mounted = None
        self.hub.close_all()
        if self.outbox is not None:
            await self.outbox.close()
            self.outbox = None

    def reconfigure(self, config: Any) -> None:
        super().reconfigure(config)
        self.config = config
        if self.uploads is not None:  # a reload moves the limits; 0 turns uploads off
            self.uploads.max_bytes = config.max_upload_bytes
            self.uploads.ttl_s = config.upload_ttl_s

    def status(self) -> dict[str, Any]:
        return {
            "path": self.config.path,
            "auth": self.config.auth,
            "streams": self.hub.streams,
            "browsers_connected": self.hub.sessions,
        }

    # -- outbound ---------------------------------------------------------------------------

    def personal_data(self) -> Sequence[PersonalData]:
        return (WebChatData(self),)

    def render(self, message: OutboundMessage) -> list[Rendered]:
        files = self.ctx.kv.get("files")
        if files is None:
            return render(message)
        return render(message, lambda f: files.link(f, time.time()))

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        return await self._write(target, rendered, None)

    async def edit(self, target: Target, message_id: str, rendered: Rendered) -> SendResult:
        return await self._write(target, rendered, message_id)

    async def _write(self, target: Target, rendered: Rendered, mid: str | None) -> SendResult:
        if not valid_session_id(target.chat_id):
            return SendResult.failed(SendErrorKind.TARGET_NOT_FOUND, "not a web chat session")
        body = {"blocks": list(rendered.native.get("blocks", ()))}
        try:
            if self.outbox is None:
                raise RuntimeError("web chat is not running")
            method = "send" if mid is None else "edit"  # into the outbox the browser reads
            with tracing.span(f"webchat {method}", kind="producer", inside=True, leaf=True):
                entry = await self.outbox.put(
                    target.chat_id, "assistant", body, time.time(), message_id=mid
                )
        except RuntimeError:  # stopped or restarting: delivery retries it
            return SendResult.failed(SendErrorKind.TRANSIENT, "web chat is restarting")
        return SendResult.sent(entry.id)

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        """Copy an upload this browser made to ``dest`` (the handle is its upload id)."""
        uploads = self.uploads
        upload = await uploads.get(attachment.handle or "") if uploads is not None else None
        if uploads is None or upload is None:
            raise FetchError(MediaReason.DOWNLOAD_FAILED, "upload expired or unknown")
        if upload.size > max_bytes:
            raise FetchError(MediaReason.TOO_LARGE, f"{upload.size} bytes")
        return await uploads.copy_to(upload, dest)

    async def typing(self, target: Target) -> None:
        if self.outbox is not None:
            await self.outbox.typing(target.chat_id, TYPING_EVERY_S + 2.0)

    # -- HTTP -------------------------------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        base = self.config.path
        sub = request.path[len(base) :].strip("/")
        if request.method == "GET":
            if sub == "":
                return assets().page("index.html", base=base, title=self.config.title)
            if sub.startswith("static/"):
                return assets().serve(sub.removeprefix("static/"), request)
            if sub == "api/session":
                return self._session_info(request)
            if sub == "api/events":
                return await self._events(request)
        elif request.method == "POST" and sub in ("api/session", "api/send", "api/upload"):
            if not same_origin(request):
                return json_answer({"error": "cross-origin request refused"}, 403)
            if sub == "api/session":
                return await self._sign_in(request)
            return await self._send(request, upload=sub == "api/upload")
        return json_answer({"error": "not found"}, 404)

    def _sid(self, request: web.Request) -> str | None:
        value = request.cookies.get(self.cookie_name)
        if value is None or self._signer is None:
            return None
        return self._signer.verify(value, time.time(), self.config.session_max_age_s)

    def _who(self, sid: str) -> dict[str, Any]:
        assert self._signer is not None
        config = self.config
        agents = [config.agent, *(a for a in config.agents if a != config.agent)]
        return {
            "csrf": self._signer.csrf(sid),
            "session": sid[:8],
            "title": config.title,
            "agents": agents,
            "stream": config.stream.enabled,
            "max_input_chars": config.max_input_chars,
            "max_upload_bytes": config.max_upload_bytes if self.uploads is not None else 0,
        }

    def _session_info(self, request: web.Request) -> web.Response:
        """Who this browser is; not signed in is an answer here, not an error."""
        sid = self._sid(request)
        if sid is None:
            return json_answer({"signed_in": False, "auth": self.config.auth})
        return json_answer({"signed_in": True, **self._who(sid)})

    async def _sign_in(self, request: web.Request) -> web.Response:
        try:
            data = await read_json(request, MAX_BODY, empty={})
        except BadInput as bad:
            return bad.answer()
        if self.config.auth == "token":
            expected = secret_value(self.config.token) or ""
            given = data.get("token") if isinstance(data, dict) else None
            if not isinstance(given, str) or not secure_equals(given, expected):
                await asyncio.sleep(BAD_TOKEN_DELAY_S)  # slows guessing down
                return json_answer({"error": "wrong token", "auth": "token"}, 401)
        assert self._signer is not None
        sid = self._sid(request) or new_session_id()
        response = json_answer(self._who(sid))
        response.set_cookie(
            self.cookie_name,
            self._signer.issue(sid, time.time()),
            path=self.config.path,
            max_age=int(self.config.session_max_age_s),
            httponly=True,
            samesite="Strict",
            secure=request.secure,
        )
        return response

    async def _events(self, request: web.Request) -> web.StreamResponse:
        sid = self._sid(request)
        if sid is None:
            return json_answer({"error": "not signed in", "auth": self.config.auth}, 401)
        if self.outbox is None:
            return refuse("web chat is restarting")
        return await serve_events(request, sid, self.outbox, self.hub)

    async def _send(self, request: web.Request, upload: bool = False) -> web.Response:
        sid = self._sid(request)
        if sid is None:
            return json_answer({"error": "not signed in", "auth": self.config.auth}, 401)
        assert self._signer is not None
        if not self._signer.check_csrf(sid, request.headers.get("X-CSRF-Token", "")):
            return json_answer({"error": "missing or wrong CSRF token"}, 403)
        if not self._accepting or self._sink is None or self.outbox is None:
            return refuse("restarting; resend in a moment")
        if upload:
            if self.uploads is None or self.config.max_upload_bytes == 0:
                return json_answer({"error": self._uploads_off()}, 403)
            return await receive(request, self.uploads, sid)
        try:
            data = await read_json(request, MAX_BODY, empty={})
        except BadInput as bad:
            return bad.answer()
        files = await self._attachments(sid, data)
        if isinstance(files, str):
            return json_answer({"error": files}, 400)
        parsed = self._inbound(sid, data, files)
        if isinstance(parsed, str):
            return json_answer({"error": parsed}, 400)
        msg, echo = parsed
        client_id = msg.message_id.split(".", 1)[1]
        try:
            await self.outbox.put(sid, "user", echo, time.time(), message_id="u-" + client_id)
            submission = await self._sink.submit(msg)
        except (StateUnavailable, RuntimeError):  # not journaled: the page resends it
            return refuse("cannot store messages right now; resend in a moment")
        return json_answer({"message_id": msg.message_id, "duplicate": submission.duplicate}, 202)

    def _uploads_off(self) -> str:
        if self.ctx.kv.get(SHARED_KV) is not None:
            return NO_UPLOADS_REPLICAS
        if self.config.max_upload_bytes == 0:
            return "file uploads are off (max_upload_bytes: 0)"
        return "file uploads start with the next restart of the channel"

    async def _attachments(self, sid: str, data: Any) -> tuple[Attachment, ...] | str:
        """The uploads a send request names, as attachments, or why they cannot be sent."""
        ids = data.get("attachments", []) if isinstance(data, dict) else []
        if not ids:
            return ()
        if not isinstance(ids, list) or len(ids) > MAX_FILES_PER_SEND:
            return f"attachments is a list of at most {MAX_FILES_PER_SEND} upload ids"
        if self.uploads is None:
            return self._uploads_off()
        found = []
        for upload_id in ids:
            upload = await self.uploads.get(str(upload_id), sid)
            if upload is None:
                return "an upload expired or is unknown; attach the file again"
            found.append(
                Attachment(
                    kind=upload.kind,
                    name=upload.name,
                    mime=upload.mime,
                    size=upload.size,
                    handle=upload.id,
                )
            )
        return tuple(found)

    def _inbound(
        self, sid: str, data: Any, files: tuple[Attachment, ...] = ()
    ) -> tuple[InboundMessage, dict[str, Any]] | str:
        """The message a send request describes and how the page shows it, or why it is none."""
        if not isinstance(data, dict) or not _CLIENT_ID.match(str(data.get("client_id", ""))):
            return "client_id (8-64 of A-Z a-z 0-9 _ -) is required"
        choice = data.get("choice")
        is_choice = isinstance(choice, str) and not files
        text = choice if is_choice else data.get("text", "" if files else None)
        if not isinstance(text, str) or not (text.strip() or files):
            return "text is required"
        if len(text) > self.config.max_input_chars:
            return f"text is longer than {self.config.max_input_chars} characters"
        agent = data.get("agent")
        route = AGENT_ROUTE + agent if agent in self.config.agents else None
        message_id = f"{sid}.{data['client_id']}"
        echo = _echo(text, data.get("label"), message_id, files, choice=is_choice)
        msg = InboundMessage(
            channel=self.name,
            platform=self.platform,
            chat_id=sid,
            chat_kind="direct",
            sender_id=sid,
            message_id=message_id,
            text=text,
            sender_name="web-" + sid[:6],
            is_command=not is_choice and text.startswith("/"),
            received_at=time.time(),
            choice=text if is_choice else None,
            reply_target=Target(self.name, sid),
            route=route,
            attachments=files,
        )
        return msg, echo


def _echo(
    text: str, label: object, message_id: str, files: tuple[Attachment, ...], *, choice: bool
) -> dict[str, Any]:
    """How the page shows the sent message: the text with its files, or a choice's label."""
    if choice:
        shown = (label if isinstance(label, str) else text)[:200]
        return {"text": shown, "choice": True, "message_id": message_id}
    shown_text = "\n".join([text, *(f"📎 {f.name}" for f in files)]).strip()
    return {"text": shown_text, "message_id": message_id}


__all__ = ["WebChatChannel"]
