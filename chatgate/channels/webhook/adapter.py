"""The webhook channel: one HTTP route per configured webhook, served by the gateway's own app.

Order of checks per request: size (413) → signature (401, nothing processed) → filter (200
ignored) → journal + turn. A redelivery with the same delivery id (or, without one, the same body
within the dedupe window) gets the first result and never a second agent call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl

import aiohttp
from aiohttp import web

from chatgate.channels.base import ChannelAdapter, ChannelContext, InboundSink
from chatgate.channels.capabilities import Capabilities
from chatgate.channels.http_ingress import refuse, signed_ingress
from chatgate.channels.webhook import LIMITS
from chatgate.channels.webhook.config import WebhookChannelConfig, WebhookRouteConfig
from chatgate.channels.webhook.media import fetch_payload_file, payload_attachments
from chatgate.config.base import secret_value
from chatgate.http_input import MAX_JSON_DEPTH, BadInput, json_depth, utf8_clean
from chatgate.model.compact import standard_json
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import Attachment, InboundMessage, Target
from chatgate.model.outbound import File
from chatgate.model.reasons import DropReason, IngressReason, RefusalReason, TaintSource
from chatgate.policies.taint import UNTRUSTED_EXTRA
from chatgate.policies.webhook_filter import (
    Pieces,
    compile_template,
    matches,
    render_pieces,
    template_fields,
)

log = logging.getLogger("chatgate.webhook")
DELIVERY_ID_HEADERS = ("X-GitHub-Delivery", "X-Request-Id", "X-Delivery-Id", "X-Webhook-Id")
SYNC_WAIT_MARGIN_S = 30.0
TRACEPARENT = re.compile(r"[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")
CAPABILITIES = Capabilities(limits=LIMITS)
SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
T = TypeVar("T")


def _json(data: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=standard_json)


class WebhookChannel(ChannelAdapter):
    platform = "webhook"

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: WebhookChannelConfig = ctx.config
        self._sink: InboundSink | None = None
        self._paths: list[str] = []
        self._accepting = False
        self.sync_timeout_s = 600.0
        self._downloads: aiohttp.ClientSession | None = None  # payload file downloads, on first use

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink
        self._mount()
        self._accepting = True

    def _mount(self) -> None:
        for path in self._paths:
            self.ctx.http.remove(path)
        self._paths = [route.path for route in self.config.routes.values()]
        for name, route in self.config.routes.items():
            self.ctx.http.add("POST", route.path, self._handler(name, route))

    async def stop(self) -> None:
        self._accepting = False
        for path in self._paths:
            self.ctx.http.remove(path)
        self._paths.clear()
        if self._downloads is not None:
            await self._downloads.close()
            self._downloads = None

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        """A payload file: base64 from the body, or a URL on the route's allow-listed hosts."""
        if self._downloads is None:
            self._downloads = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=30),
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return await fetch_payload_file(
            self._downloads, self.config.routes, attachment, dest, max_bytes
        )

    async def stop_intake(self) -> None:
        self._accepting = False

    def reconfigure(self, config: WebhookChannelConfig) -> None:
        """Routes apply live: drop the old paths, mount the new ones."""
        super().reconfigure(config)
        self.config = config
        if self._sink is not None:
            self._mount()

    def status(self) -> dict[str, Any]:
        return {
            "routes": {
                name: {
                    "path": route.path,
                    "respond": route.respond,
                    "configured": route.signature == "none"
                    or secret_value(route.secret) is not None,
                }
                for name, route in self.config.routes.items()
            }
        }

    def _handler(self, name: str, route: WebhookRouteConfig) -> Any:
        plan = _RoutePlan.of(route)

        async def handle(request: web.Request) -> web.StreamResponse:
            response = await self._handle(name, route, plan, request)
            self.ctx.metrics.count(f"webhook_{response.status}", channel=name)
            return response

        return handle

    async def _handle(
        self, name: str, route: WebhookRouteConfig, plan: _RoutePlan, request: web.Request
    ) -> web.Response:
        if not self._accepting or self._sink is None:
            return refuse("shutting down, retry later")  # another replica or the restart takes it
        secret = secret_value(route.secret)
        if route.signature != "none" and secret is None:
            return _json({"error": "route not configured: its secret is empty"}, 503)

        def refused(why: str) -> None:
            log.warning(
                "webhook rejected", extra={"route": name, "why": why, "peer": request.remote}
            )

        body = await signed_ingress(
            request,
            limit=route.max_body_bytes,
            kind=route.signature,
            secret=secret,
            now=time.time,
            refused=refused,
        )
        if isinstance(body, web.Response):
            return body
        payload = _parse_body(body, request.content_type)
        if payload is None:
            return _json({"error": "body is not valid JSON"}, 400)
        event: dict[str, Any] = {"payload": payload}
        if plan.reads_request:
            event["headers"], event["query"] = dict(request.headers), dict(request.query)
            try:
                utf8_clean([*event["headers"].values(), *event["query"].values()], "a header")
            except BadInput as bad:
                return bad.answer()
        if not matches(event, route.when):
            return _json({"ignored": True, "reason_code": DropReason.FILTER_MISMATCH.value})
        prompt, files = _turn_input(name, route, plan, event)
        if not prompt.strip():
            return _json({"ignored": True, "reason_code": DropReason.EMPTY_INPUT.value})
        delivery_id = _delivery_id(request, body)
        session = render_pieces(plan.session, event) if plan.session else None
        # The route's configured hint (agent, trust, one-shot) is applied by the gateway; the
        # conversation is the route, and within it the rendered session (or this delivery).
        msg = InboundMessage(
            channel=self.name,
            platform=self.platform,
            chat_id=name,
            chat_kind="direct",
            sender_id=f"route:{name}",
            message_id=f"{name}:{delivery_id}",
            text=prompt,
            thread_id=session if session else f"once:{delivery_id}",
            sender_name=name,
            received_at=time.time(),
            reply_target=Target.parse(route.deliver.to) if route.deliver else None,
            route=name,
            attachments=files,
            extra=_trace_context(request.headers.get("traceparent"))
            | ({UNTRUSTED_EXTRA: TaintSource.UNTRUSTED_ROUTE.value} if route.untrusted else {}),
        )
        return await self._submit(msg, route, request)

    async def _submit(
        self, msg: InboundMessage, route: WebhookRouteConfig, request: web.Request
    ) -> web.Response:
        """Hand the message to the gateway; answer at once (async) or with the turn's reply."""
        assert self._sink is not None
        try:
            submission = await self._sink.submit(msg)
        except StateUnavailable:  # not journaled: refuse, so the sender retries it later
            return refuse(
                "the gateway cannot store messages right now; retry later",
                reason_code=RefusalReason.STATE_UNAVAILABLE.value,
                id=msg.message_id,
            )
        if route.respond == "async" and not submission.result.done():
            return _json(
                {
                    "accepted": True,
                    "reason_code": IngressReason.ACCEPTED.value,
                    "id": msg.message_id,
                    "duplicate": submission.duplicate,
                },
                202,
            )
        try:
            result = await wait_shielded(submission.result, self.sync_timeout_s)
        except StateUnavailable:  # journaled, but the state failed mid-turn: resumed later
            return refuse(
                "the gateway lost its state mid-turn; retry with the same delivery id",
                reason_code=RefusalReason.STATE_UNAVAILABLE.value,
                id=msg.message_id,
            )
        except (TimeoutError, asyncio.CancelledError):
            return refuse("not finished; retry with the same delivery id", id=msg.message_id)
        answer: dict[str, Any] = {
            "reply": result.reply or "",
            "reason_code": result.reason,
            "session": result.session,
        }
        if result.files:
            answer["files"] = self._files(request, result.files)
        return _json(answer)

    def _files(self, request: web.Request, files: tuple[File, ...]) -> list[dict[str, Any]]:
        """Each file the answer carries, with a signed download link on this server."""
        store = self.ctx.kv.get("files")
        origin = link_origin(self.config.public_url, request)
        described = []
        for file in files:
            info = store.described(file, time.time()) if store is not None else {"name": file.name}
            if isinstance(info.get("url"), str):
                info["url"] = origin + str(info["url"])
            described.append(info)
        return described


_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62})(?:\.[A-Za-z0-9\-]{1,63})*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?"
)


def link_origin(public_url: str | None, request: web.Request) -> str:
    """Where file links point: the configured public URL, else this request's scheme and Host
    when the Host is a plain host[:port]; else none (the links are paths on this server)."""
    if public_url:
        return public_url.rstrip("/")
    host = request.headers.get("Host", "")
    if not _HOST.fullmatch(host):
        return ""
    return f"{request.scheme}://{host}"


def _turn_input(
    name: str, route: WebhookRouteConfig, plan: _RoutePlan, event: dict[str, Any]
) -> tuple[str, tuple[Attachment, ...]]:
    """The prompt and the payload's files (a files-only delivery gets a placeholder prompt)."""
    payload = event["payload"]
    prompt = render_pieces(plan.prompt, event) if plan.prompt else _default_prompt(payload)
    files = payload_attachments(name, route.attachments, event) if route.attachments else ()
    if not prompt.strip() and files:
        prompt = f"[{files[0].kind}]"
    return prompt, files


async def wait_shielded(future: asyncio.Future[T], timeout_s: float) -> T:
    """``future``'s result, waiting at most ``timeout_s`` (TimeoutError after that).

    Like ``asyncio.shield`` inside ``asyncio.timeout``: a caller giving up (or cancelled) never
    cancels ``future``, which other callers may share. One waiter and one timer, ~half the cost.
    """
    if not future.done():
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def wake(_: object = None) -> None:
            if not waiter.done():
                waiter.set_result(None)

        future.add_done_callback(wake)
        timer = loop.call_later(timeout_s, wake)
        try:
            await waiter
        finally:
            timer.cancel()
            future.remove_done_callback(wake)
        if not future.done():
            raise TimeoutError
    return future.result()


@dataclass(frozen=True)
class _RoutePlan:
    """What a route's requests need, worked out once when the route is mounted: its templates
    parsed, and whether anything reads the request's headers or query (else they are not
    copied into the event)."""

    prompt: Pieces
    session: Pieces
    reads_request: bool

    @classmethod
    def of(cls, route: WebhookRouteConfig) -> _RoutePlan:
        prompt = compile_template(route.prompt) if route.prompt else ()
        session = compile_template(route.session) if route.session else ()
        fields = [*template_fields(route.prompt or ""), *template_fields(route.session or "")]
        reads = route.when is not None or any(
            path.split(".", 1)[0] in ("headers", "query") for path in fields
        )
        return cls(prompt, session, reads)


def _parse_body(body: bytes, content_type: str) -> Any:
    if not body:
        return {}
    text = body.decode("utf-8", errors="replace")
    if content_type == "application/x-www-form-urlencoded":
        return dict(parse_qsl(text, keep_blank_values=True))
    try:
        payload = json.loads(text)
    except RecursionError:
        return None
    except ValueError:
        return None if content_type in ("application/json", "") else {"text": text}
    # Nesting needs an opening bracket per level, and a lone surrogate needs a \\u escape (the
    # text itself came from a replacing UTF-8 decode): most bodies skip both walks.
    nesting_bound = text.count("[") + text.count("{")
    if nesting_bound > MAX_JSON_DEPTH and json_depth(payload) > MAX_JSON_DEPTH:
        return None
    if "\\u" in text and not _encodable(payload):
        return None
    return payload


def _encodable(payload: Any) -> bool:
    """False when JSON escapes decoded to lone surrogates (`"\\ud800"`): no UTF-8 text can hold
    them, so the journal and the transcript could not store the turn."""
    try:
        json.dumps(payload, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _default_prompt(payload: Any) -> str:
    if isinstance(payload, dict):
        for key in ("text", "message", "prompt"):
            if isinstance(payload.get(key), str):
                return str(payload[key])
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _delivery_id(request: web.Request, body: bytes) -> str:
    for header in DELIVERY_ID_HEADERS:
        value = request.headers.get(header)
        if value:
            return delivery_key(value)
    return "sha-" + hashlib.sha256(body).hexdigest()[:32]


def delivery_key(raw: str) -> str:
    """A dedupe key for a sender's delivery id: distinct ids never share a key.

    Ids made only of ``[A-Za-z0-9_.-]`` (up to 128) are kept as they are; anything else is
    hashed whole, so ``???`` and ``!!!`` stay two deliveries.
    """
    if SAFE_ID.fullmatch(raw):
        return "id-" + raw
    digest = hashlib.sha256(raw.encode("utf-8", errors="surrogatepass")).hexdigest()
    return "idh-" + digest


def _trace_context(traceparent: str | None) -> dict[str, str]:
    """The caller's W3C trace context, kept when well formed (its trace continues here)."""
    if traceparent is not None and TRACEPARENT.fullmatch(traceparent.strip()):
        return {"traceparent": traceparent.strip()}
    return {}
