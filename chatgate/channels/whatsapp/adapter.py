"""The WhatsApp channel adapter (Cloud API): the webhook on chatgate's port, sends over Graph.

Inbound: Meta verifies the callback URL with a GET (`hub.verify_token`); every POST is checked
against `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the app secret) before anything
is parsed, then each message is journaled before Meta gets its 200 (a refused journal write
answers 503: Meta delivers the post again; redeliveries dedupe by message id). Status callbacks
become delivery receipts in the state backend instead of turns.

Outbound: a reply goes out free-form inside the 24-hour window, as the configured template
outside it, or back to the gateway as `outside_window` (the DLQ). A refused token or permission
parks the channel with its fix; rate limits wait as long as Meta's code asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from aiohttp import web

from chatgate.channels.base import (
    ChannelContext,
    ChannelError,
    InboundSink,
    NotConfigured,
    Rendered,
)
from chatgate.channels.capabilities import AckMode, Capabilities
from chatgate.channels.files import render_with_files, upload_of
from chatgate.channels.http_ingress import refuse, signed_ingress
from chatgate.channels.ordering import ChatOrder
from chatgate.channels.tallies import TallyingAdapter
from chatgate.channels.whatsapp import LIMITS, errors
from chatgate.channels.whatsapp.config import WhatsAppChannelConfig, phone_id
from chatgate.channels.whatsapp.graph import Graph, GraphError
from chatgate.channels.whatsapp.inbound import REACTION, Ignored, Receipt, events
from chatgate.channels.whatsapp.media import fetch_media
from chatgate.channels.whatsapp.media_out import caption_after, media_payload
from chatgate.channels.whatsapp.render import MenuWords, plain_text, render
from chatgate.channels.whatsapp.window import Windows, template_payload
from chatgate.config.base import secret_value
from chatgate.http_input import BadInput, parse_json
from chatgate.model.errors import FetchError, StateUnavailable
from chatgate.model.messages import Attachment, InboundMessage, SendResult, Target
from chatgate.model.outbound import File, OutboundMessage
from chatgate.model.reasons import DropReason, MediaReason, SendErrorKind
from chatgate.model.text_ids import TextId
from chatgate.policies.reactions import CONTEXT_ONLY, ReactionMode, reaction_input
from chatgate.secure_compare import secure_equals
from chatgate.state.protocols import ChannelFacts
from chatgate.state.records import receipt_key
from chatgate.texts.voice import Voice

SENT_IDS_KEPT = 4096  # answers a reaction can still be recognised on (in memory)
log = logging.getLogger("chatgate.whatsapp")
CONNECT_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 10.0
TYPING_REFRESH_S = 20.0  # WhatsApp shows "typing…" for up to 25 s or until the answer
TYPING_KEPT = 4096
RECEIPT_TTL_S = 7 * 86_400.0
RECEIPT_RANK = {"sent": 0, "delivered": 1, "read": 2, "failed": 3}
PHONE_FIELDS = "display_phone_number,verified_name,quality_rating"
NO_TOKEN_HINT = (
    "set channels.whatsapp.access_token (a permanent system-user token: Business settings → "
    "System users → Generate new token) or access_token_file"
)


def capabilities(config: WhatsAppChannelConfig) -> Capabilities:
    """No edits or threads; a read receipt at once and the typing indicator while a turn runs."""
    ack = AckMode.TYPING | AckMode.REACTION if config.read_receipts else AckMode.NONE
    return Capabilities(limits=LIMITS, ack=ack, typing_every_s=TYPING_REFRESH_S)


class WhatsAppChannel(TallyingAdapter):
    COUNTERS = (
        "messages",
        "receipts",
        "failed_receipts",
        "templates",
        "outside_window",
        "refused",
        "uploads",
    )
    platform = "whatsapp"

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: WhatsAppChannelConfig = ctx.config
        self.graph: Graph | None = None
        self._words: tuple[Voice, MenuWords] | None = None  # the menu words and their Voice
        self.number: dict[str, Any] = {}
        self.facts: ChannelFacts | None = ctx.kv.get("facts")
        self.windows = Windows(ctx.name, self.facts, ctx.clock)
        self._sink: InboundSink | None = None
        self._route: str | None = None
        self._accepting = False
        self._order = ChatOrder()
        self._sent: dict[str, None] = {}  # our latest message ids (an ordered, bounded set)
        self._typing: dict[str, float] = {}  # message id -> when "typing…" was last shown

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        return self.capabilities_of(capabilities)

    async def start(self, sink: InboundSink) -> None:
        token = secret_value(self.config.access_token)
        if token is None:
            raise NotConfigured("no access token", NO_TOKEN_HINT)
        self._sink = sink
        self.graph = Graph.open(self.config, token)
        try:
            self.number = await asyncio.wait_for(self._phone(), CONNECT_TIMEOUT_S)
        except BaseException as exc:
            await self._close()
            if isinstance(exc, asyncio.CancelledError):
                raise
            error = errors.start_error(exc, self.config.phone_number_id, self.config.api_base)
            self.note_error(str(error), error.hint)
            raise error from None
        self._route = self.config.webhook_path
        self.ctx.http.add("GET", self._route, self._verify)
        self.ctx.http.add("POST", self._route, self._webhook)
        self._accepting = True
        log.info(
            "whatsapp connected",
            extra={"phone": self.number.get("display_phone_number"), "path": self._route},
        )

    async def _phone(self) -> dict[str, Any]:
        assert self.graph is not None
        return await self.graph.get(str(self.config.phone_number_id), fields=PHONE_FIELDS)

    async def stop_intake(self) -> None:
        """Draining: refuse new posts with 503 (Meta delivers them again later)."""
        self._accepting = False

    async def stop(self) -> None:
        await self.stop_intake()
        await self._close()

    async def _close(self) -> None:
        if self._route is not None:
            self.ctx.http.remove(self._route)
            self._route = None
        graph, self.graph = self.graph, None
        if graph is not None:
            await graph.close()

    async def probe(self) -> bool:
        """The token and the phone number still answer (and the quality rating is refreshed)."""
        if self.graph is None:
            return False
        try:
            self.number = await asyncio.wait_for(self._phone(), PROBE_TIMEOUT_S)
        except Exception:
            return False
        return True

    def reconfigure(self, config: Any) -> None:
        super().reconfigure(config)
        self.config = config

    def status(self) -> dict[str, Any]:
        phone = self.number.get("display_phone_number")
        detail: dict[str, Any] = {
            "phone_number": phone,
            "verified_name": self.number.get("verified_name"),
            "quality_rating": self.number.get("quality_rating"),
            "webhook_path": self.config.webhook_path,
            "counters": dict(self.counters),
        }
        if phone:
            name = self.number.get("verified_name") or "?"
            quality = self.number.get("quality_rating") or "unknown"
            detail["summary"] = (
                f"{phone} ({name}) · quality {quality} · webhook {self.config.webhook_path}"
            )
        detail.update(self.tallies())
        return detail

    # -- webhook ------------------------------------------------------------------------------

    async def _verify(self, request: web.Request) -> web.Response:
        """Meta's subscription handshake: echo `hub.challenge` when the verify token matches."""
        expected = secret_value(self.config.verify_token)
        given = request.query.get("hub.verify_token", "")
        if (
            request.query.get("hub.mode") != "subscribe"
            or expected is None
            or not secure_equals(given, expected)
        ):
            log.warning("whatsapp webhook verification refused", extra={"peer": request.remote})
            return web.json_response({"error": "verification failed"}, status=403)
        return web.Response(text=request.query.get("hub.challenge", ""))

    async def _webhook(self, request: web.Request) -> web.Response:
        def refused(why: str) -> None:
            self.ctx.metrics.count("whatsapp_bad_signature", channel=self.name)
            log.warning("whatsapp post refused", extra={"why": why, "peer": request.remote})

        body = await signed_ingress(
            request,
            limit=self.config.max_body_bytes,
            kind="github",  # Meta signs like GitHub: "sha256=" + HMAC-SHA256(app secret, body)
            secret=secret_value(self.config.app_secret),
            now=self.ctx.clock.time,
            refused=refused,
            accepting=lambda: self._accepting and self._sink is not None,
        )
        if isinstance(body, web.Response):
            return body
        try:
            payload = parse_json(body)
        except BadInput as bad:
            return bad.answer()
        try:
            for event in events(payload, self.name, self.config.phone_number_id):
                await self._handle(event)
        except StateUnavailable:  # not journaled: Meta re-sends on a non-2xx answer
            self.counters["refused"] += 1
            self.ctx.metrics.count("whatsapp_refused_unwritable_state", channel=self.name)
            return refuse("cannot store messages right now")
        return web.json_response({"ok": True})

    async def _handle(self, event: InboundMessage | Receipt | Ignored) -> None:
        assert self._sink is not None
        if isinstance(event, Ignored):
            self.note_ignored(event.reason, event.chat_id, self._sink)
        elif isinstance(event, Receipt):
            await self._receipt(event)
        else:
            if REACTION in event.extra:
                event = self._reaction(event)
                if isinstance(event, Ignored):
                    return await self._handle(event)
            self.counters["messages"] += 1
            msg = await self.resolve_choice(event) if event.choice is not None else event
            async with self._order.turn(msg.chat_id):
                await self._sink.submit(msg)  # journaled: now it may be acked
                await self._heard(msg)

    def _reaction(self, msg: InboundMessage) -> InboundMessage | Ignored:
        """A reaction on one of our answers, per the channel's `reactions` (ignored otherwise)."""
        ours = msg.reply_to is not None and msg.reply_to in self._sent
        mode = reaction_input(ReactionMode(self.config.reactions), msg.extra[REACTION], ours)
        if mode is ReactionMode.IGNORE:
            return Ignored(DropReason.REACTION_IGNORED, msg.chat_id)
        if mode is ReactionMode.CONTEXT:
            return msg.with_extra({CONTEXT_ONLY: True})
        return msg

    async def _heard(self, msg: InboundMessage) -> None:
        """The user's window opens now: durable before the 200, so an answer recovered after a
        crash still goes out free-form."""
        try:
            await self.windows.heard(msg.sender_id, msg.received_at)
        except Exception as exc:  # the window then reads closed: a template or the DLQ
            log.warning("could not record the 24-hour window", extra={"error": type(exc).__name__})

    async def _receipt(self, receipt: Receipt) -> None:
        """Keep the furthest status of a sent message (statuses may arrive out of order)."""
        self.counters["receipts"] += 1
        if receipt.status == "failed":
            self._delivery_failed(receipt)
        if self.facts is None:
            return
        key, now = receipt_key(receipt.message_id), self.ctx.clock.time()
        try:
            old = (await self.facts.get_many(self.name, [key], now)).get(key)
            rank = RECEIPT_RANK.get(str((old or {}).get("status")), -1)
            if rank >= RECEIPT_RANK[receipt.status]:
                return
            value: dict[str, Any] = {"status": receipt.status, "at": receipt.at or now}
            if receipt.status == "failed":
                value.update(code=receipt.code, error=receipt.error)
            await self.facts.put(self.name, key, value, now, RECEIPT_TTL_S)
        except Exception as exc:  # a receipt is information, not work: never refuse the post
            log.warning("could not store a delivery receipt", extra={"error": type(exc).__name__})

    def _delivery_failed(self, receipt: Receipt) -> None:
        """Meta accepted a message and later could not deliver it: visible in status and logs."""
        self.counters["failed_receipts"] += 1
        kind = errors.classify_graph(None, receipt.code, receipt.error).kind
        if kind is SendErrorKind.OUTSIDE_WINDOW:
            self.windows.closed(receipt.recipient)
        what = f"delivery failed after sending: {receipt.code}: {receipt.error}"
        self.note_error(what, errors.hint(receipt.code, kind, self.config.api_base))
        self.ctx.metrics.count("whatsapp_delivery_failed", channel=self.name)
        log.warning(
            "whatsapp delivery failed",
            extra={"message_id": receipt.message_id, "code": receipt.code, "error": receipt.error},
        )

    # -- outbound -------------------------------------------------------------------------------

    def render(self, message: OutboundMessage) -> list[Rendered]:
        words = self._menu_words()
        return render_with_files(
            message, lambda m: render(m, shorten=self.shorten_choice, words=words)
        )

    def _menu_words(self) -> MenuWords:
        """The catalog's menu words in this channel's language (WhatsApp tells no user
        language), English when the gateway gave no texts."""
        voices = self.ctx.kv.get("voices")
        if voices is None:
            return MenuWords()
        voice = voices.for_channel(self.name)
        if self._words is None or self._words[0] is not voice:  # rendered once per Voice
            words = MenuWords(voice.text(TextId.MENU_CHOOSE), voice.text(TextId.MENU_OPEN_LIST))
            self._words = (voice, words)
        return self._words[1]

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        user = phone_id(target.chat_id)
        upload = upload_of(rendered)
        if upload is not None:
            return await self._send_file(user, *upload)
        payload = rendered.native.get("payload") or {
            "type": "text",
            "text": {"body": rendered.text},
        }
        if await self.windows.is_open(user):
            quoting = self.config.quote_replies and rendered.native.get("quote", True)
            quote = target.reply_to if quoting else None
            try:
                return await self._message(user, payload, quote)
            except GraphError as exc:
                if exc.code not in errors.WINDOW_CODES:
                    raise
                self.windows.closed(user)  # Meta knows better: the window closed
        return await self._outside_window(user, rendered)

    async def _send_file(self, user: str, file: File, data: bytes) -> SendResult:
        """Upload to `/{phone_number_id}/media`, then a `/messages` call with the returned id.
        Outside the 24-hour window a file cannot go at all (templates carry text here): the
        reply waits in the DLQ, and `dlq replay` uploads it once the user writes again."""
        if not await self.windows.is_open(user):
            return self._refused_outside_window("no template can carry a file")
        if self.graph is None:
            raise ConnectionError("the WhatsApp channel is not connected")
        media_id = await self._upload(file, data)
        try:
            result = await self._message(user, media_payload(file, media_id), None)
        except GraphError as exc:
            if exc.code not in errors.WINDOW_CODES:
                raise
            self.windows.closed(user)
            return self._refused_outside_window("no template can carry a file")
        if caption_after(file):
            await self._message(user, {"type": "text", "text": {"body": file.caption}}, None)
        return result

    async def _upload(self, file: File, data: bytes) -> str:
        assert self.graph is not None
        path = f"{self.config.phone_number_id}/media"
        try:
            answer = await self.graph.upload(path, data, file.name, file.mime)
        except GraphError as exc:
            if exc.code in errors.PARKING or exc.status == 401:
                self._post_failed(exc)
            raise
        media_id = answer.get("id")
        if not media_id:
            raise GraphError(200, None, "the media upload answered no id")
        self.counters["uploads"] += 1
        return str(media_id)

    def _refused_outside_window(self, why: str) -> SendResult:
        self.counters["outside_window"] += 1
        error = f"outside_window: the user last wrote over 24 h ago and {why}"
        self.note_error(error, errors.WINDOW_HINT)
        return SendResult.failed(SendErrorKind.OUTSIDE_WINDOW, error)

    async def _outside_window(self, user: str, rendered: Rendered) -> SendResult:
        template = self.config.templates.outside_window
        if template is None:
            return self._refused_outside_window(
                "no template is set (channels.whatsapp.templates.outside_window)"
            )
        self.counters["templates"] += 1
        text = plain_text(rendered) or rendered.text
        return await self._message(user, template_payload(template, text), None)

    async def _message(self, user: str, payload: dict[str, Any], quote: str | None) -> SendResult:
        body: dict[str, Any] = {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": user,
            **payload,
        }
        if quote:
            body["context"] = {"message_id": quote}
        answer = await self._post("messages", body)
        messages = answer.get("messages")
        first = messages[0] if isinstance(messages, list) and messages else {}
        if first.get("id"):
            self._sent[str(first["id"])] = None
            if len(self._sent) > SENT_IDS_KEPT:
                del self._sent[next(iter(self._sent))]
        return SendResult.sent(str(first.get("id") or "")) if first.get("id") else SendResult.sent()

    async def _post(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        """One `/{phone_number_id}/<method>` call; a refused token or permission parks the
        channel (the caller still classifies the failure)."""
        if self.graph is None:
            raise ConnectionError("the WhatsApp channel is not connected")
        try:
            return await self.graph.post(f"{self.config.phone_number_id}/{method}", body)
        except GraphError as exc:
            if exc.code in errors.PARKING or exc.status == 401:
                self._post_failed(exc)
            raise

    def _post_failed(self, exc: GraphError) -> None:
        """A refused token or permission: park the channel with the fix."""
        kind = errors.classify_graph(exc.status, exc.code, exc.message).kind
        self.fail(
            ChannelError(
                f"WhatsApp refused the call ({exc.code}: {exc.message})",
                kind=SendErrorKind.AUTH_FATAL,
                hint=errors.hint(exc.code, kind, self.config.api_base),
            )
        )

    async def _read(self, message_id: str) -> None:
        """The message marked read with "typing…" shown (one call: WhatsApp has no separate
        typing call); remembered so a refresh within TYPING_REFRESH_S is not sent."""
        body: dict[str, Any] = {
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": message_id,
            "typing_indicator": {"type": "text"},
        }
        await self._post("messages", body)
        self._typing.pop(message_id, None)
        self._typing[message_id] = self.ctx.clock.monotonic()
        if len(self._typing) > TYPING_KEPT:
            del self._typing[next(iter(self._typing))]

    async def acknowledge(self, msg: InboundMessage) -> None:
        """The read receipt (blue ticks) as the turn starts, "typing…" with it: the indicator
        lasts until the answer (or 25 s), so the turn's typing needs no call of its own."""
        if self.config.read_receipts:
            with contextlib.suppress(Exception):
                await self._read(msg.message_id)

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        if self.graph is None:
            raise FetchError(MediaReason.DOWNLOAD_FAILED, "channel not started")
        return await fetch_media(self.graph, attachment, dest, max_bytes)

    async def typing(self, target: Target) -> None:
        if not target.reply_to:
            return
        shown = self._typing.get(target.reply_to)
        if shown is None or self.ctx.clock.monotonic() - shown >= TYPING_REFRESH_S:
            await self._read(target.reply_to)

    def classify_error(self, exc: BaseException) -> SendResult:
        result = errors.classify(exc)
        kind = result.kind or SendErrorKind.UNKNOWN
        code = exc.code if isinstance(exc, GraphError) else None
        self.note_error(
            f"send failed: {kind.value}: {result.error}",
            errors.hint(code, kind, self.config.api_base),
        )
        log.warning("whatsapp send failed", extra={"kind": kind.value, "error": result.error})
        return result


__all__ = ["WhatsAppChannel"]
