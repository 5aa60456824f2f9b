"""The Microsoft Teams channel adapter: the messaging endpoint on chatgate's port, answers
through the Bot Connector with the Teams SDK.

Inbound: every POST's bearer token is verified before the body is read; then the activity is
parsed with the SDK's models, its `serviceUrl` must equal the token's claim and its tenant be
allowed; the chat's conversation reference is saved and the message journaled before Teams
gets its 200 (a refused journal write answers 503: Teams retries; retries dedupe by id).

Outbound: each send finds the chat's reference (without one: `no_reference`, to the DLQ with
the fix); a refused token (401) or app (403) parks the channel; 404 is that conversation's alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import httpx
from aiohttp import web

from chatgate.channels.base import (
    ChannelAdapter,
    ChannelContext,
    ChannelError,
    InboundSink,
    NotConfigured,
    Rendered,
)
from chatgate.channels.capabilities import AckMode, Capabilities
from chatgate.channels.download import stream_to_file
from chatgate.channels.http_ingress import read_request, refuse
from chatgate.channels.ordering import ChatOrder
from chatgate.channels.teams import LIMITS, consent, errors, ids
from chatgate.channels.teams.auth import Unverified, Verifier
from chatgate.channels.teams.cards import CardMemory
from chatgate.channels.teams.config import TeamsChannelConfig
from chatgate.channels.teams.connector import Connector
from chatgate.channels.teams.inbound import (
    Ignored,
    Reference,
    normalize,
    reference,
    tenant_allowed,
    tenant_of,
)
from chatgate.channels.teams.offers import FileOffers
from chatgate.channels.teams.render import OFFER_KEY, render, utf8_length
from chatgate.channels.words import words_for
from chatgate.config.base import secret_value
from chatgate.http_input import BadInput, parse_json
from chatgate.model.errors import FetchError, StateUnavailable
from chatgate.model.messages import Attachment, SendResult, Target
from chatgate.model.outbound import File, OutboundMessage
from chatgate.model.reasons import DropReason, MediaReason, SendErrorKind
from chatgate.model.results import press_notice
from chatgate.policies.edits import EditMode

log = logging.getLogger("chatgate.teams")
CONNECT_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 10.0
ATTACHMENTS = "/v3/attachments/"  # the connector's attachment API: served to the bot token only
NO_CREDENTIALS_HINT = (
    "set channels.teams.app_id and app_password (Azure portal → Azure Bot → Configuration: "
    "the Microsoft App ID, and a client secret from its app registration)"
)


def capabilities(config: TeamsChannelConfig) -> Capabilities:
    """Edits (updateActivity, for streaming), threads in channels, typing while a turn runs."""
    return Capabilities(
        limits=LIMITS,
        length=utf8_length,
        edits=True,
        threads=True,
        ack=AckMode.TYPING,
        typing_every_s=config.typing_every_s,
        stream=config.stream.enabled,
        min_edit_interval_s=config.stream.min_edit_interval_s,
    )


class TeamsChannel(ChannelAdapter):
    platform = "teams"

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: TeamsChannelConfig = ctx.config
        self.connector: Connector | None = None
        self.verifier: Verifier | None = None
        self.last_error: dict[str, Any] | None = None
        self.ignored: dict[str, int] = {}
        self.counters = dict.fromkeys(("activities", "messages", "unverified", "refused"), 0)
        self._session: aiohttp.ClientSession | None = None
        self._sink: InboundSink | None = None
        self._route: str | None = None
        self._accepting = False
        self._order = ChatOrder()
        self.offers: FileOffers | None = None
        self.cards = CardMemory(None, self.name, ctx.clock)

    @property
    def capabilities(self) -> Capabilities:
        return self.capabilities_of(capabilities)

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self, sink: InboundSink) -> None:
        if not self.config.app_id or secret_value(self.config.app_password) is None:
            raise NotConfigured("no app id and password", NO_CREDENTIALS_HINT)
        self._sink = sink
        facts = self.ctx.kv.get("facts")
        self.connector = Connector(self.config, self.name, facts, self.ctx.clock)
        self.cards = CardMemory(facts, self.name, self.ctx.clock)
        timeout = aiohttp.ClientTimeout(total=self.config.request_timeout_s)
        self._session = aiohttp.ClientSession(timeout=timeout)
        cloud = self.connector.cloud
        self.verifier = Verifier(
            self.config.app_id,
            cloud.token_issuer,
            cloud.openid_metadata_url,
            self._session,
            self.ctx.clock,
        )
        try:
            await asyncio.wait_for(self.connector.tokens.get(), CONNECT_TIMEOUT_S)
        except BaseException as exc:
            await self._close()
            if isinstance(exc, asyncio.CancelledError):
                raise
            error = self._start_error(exc)
            self.note_error(str(error), error.hint)
            raise error from None
        files = self.ctx.kv.get("files")
        if files is not None:
            words = words_for(self.ctx.kv, self.name)
            self.offers = FileOffers(
                self.connector, files, self._session, words, self._upload_failed
            )
        self._route = self.config.messaging_path
        self.ctx.http.add("POST", self._route, self._messages)
        self._accepting = True
        log.info("teams ready", extra={"path": self._route, "app_id": self.config.app_id})

    def _start_error(self, exc: BaseException) -> ChannelError:
        result = errors.classify(exc)
        if result.kind is SendErrorKind.AUTH_FATAL:
            return ChannelError(
                f"the Bot Framework refused the app credentials ({result.error})",
                kind=SendErrorKind.AUTH_FATAL,
                hint=errors.PASSWORD_HINT,
            )
        return ChannelError(
            f"cannot get a Bot Framework token ({result.error or type(exc).__name__})",
            kind=SendErrorKind.TRANSIENT,
            hint=errors.NETWORK_HINT,
        )

    async def stop_intake(self) -> None:
        self._accepting = False

    async def stop(self) -> None:
        await self.stop_intake()
        await self._close()

    async def _close(self) -> None:
        offers, self.offers = self.offers, None
        if offers is not None:
            offers.cancel()
        if self._route is not None:
            self.ctx.http.remove(self._route)
            self._route = None
        connector, self.connector = self.connector, None
        if connector is not None:
            with contextlib.suppress(Exception):
                await connector.close()
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def probe(self) -> bool:
        if self.connector is None:
            return False
        try:
            await asyncio.wait_for(self.connector.tokens.get(), PROBE_TIMEOUT_S)
        except Exception:
            return False
        return True

    def reconfigure(self, config: Any) -> None:
        super().reconfigure(config)
        self.config = config

    def note_error(self, error: str, hint: str) -> None:
        self.last_error = {"error": error, "hint": hint, "at": time.time()}

    def status(self) -> dict[str, Any]:
        detail: dict[str, Any] = {
            "app_id": self.config.app_id,
            "tenant_id": self.config.tenant_id or "multi-tenant",
            "messaging_path": self.config.messaging_path,
            "counters": dict(self.counters),
        }
        if self.connector is not None:
            detail["token_fetches"] = self.connector.tokens.fetches
            detail["summary"] = (
                f"app {self.config.app_id} · {detail['tenant_id']} · {self.config.messaging_path}"
            )
        if self.ignored:
            detail["ignored"] = dict(self.ignored)
        if self.offers is not None and self.offers.counters["offered"]:
            detail["file_offers"] = dict(self.offers.counters)
        if self.last_error is not None:
            detail["last_error"] = dict(self.last_error)
        return detail

    # -- inbound ------------------------------------------------------------------------------

    async def _messages(self, request: web.Request) -> web.Response:
        verifier = self.verifier
        if verifier is None:
            return refuse("not ready")
        try:
            claims = await verifier.verify(request.headers.get("Authorization"))
        except Unverified as why:
            return self._unverified(request, str(why))
        if not self._accepting or self._sink is None:
            return refuse("shutting down")
        body = await read_request(request, self.config.max_body_bytes)
        if isinstance(body, web.Response):
            return body
        try:
            activity = _activity(parse_json(body))
        except BadInput as bad:
            return bad.answer()
        if activity is None:
            return web.json_response({"error": "not a Bot Framework activity"}, status=400)
        if (activity.service_url or "").rstrip("/") != claims.service_url.rstrip("/"):
            return self._unverified(request, "serviceUrl differs from the token's claim")
        if activity.channel_id != "msteams":
            return self._unverified(request, "activity is not from msteams")
        try:
            await self._handle(activity)
        except StateUnavailable:
            self.counters["refused"] += 1
            return refuse("cannot store messages right now")
        return web.json_response({})

    def _unverified(self, request: web.Request, why: str) -> web.Response:
        self.counters["unverified"] += 1
        self.ctx.metrics.count("teams_unverified", channel=self.name)
        log.warning("teams post refused", extra={"why": why, "peer": request.remote})
        return web.json_response({"error": "unauthorized"}, status=401)

    async def _handle(self, activity: Any) -> None:
        assert self._sink is not None and self.connector is not None
        self.counters["activities"] += 1
        tenant = tenant_of(activity)
        answer = consent.answer_of(activity)
        if answer is not None and tenant_allowed(self.config.tenants(), tenant):
            if self.offers is not None:
                self.offers.answer(reference(activity), answer)
            return
        event = normalize(activity, self.name, EditMode(self.config.edits))
        if not tenant_allowed(self.config.tenants(), tenant):
            event = Ignored(DropReason.TENANT_NOT_ALLOWED, getattr(event, "chat_id", ""))
        if isinstance(event, Ignored):
            self.ignored[event.reason.value] = self.ignored.get(event.reason.value, 0) + 1
            self._sink.ignored(self.name, event.reason, chat_id=event.chat_id)
            return
        ref = reference(activity)
        await self.connector.remember(ref)  # durable before the 200
        self.counters["messages"] += 1
        msg = await self.resolve_choice(event) if event.choice is not None else event
        async with self._order.turn(msg.chat_id):
            submission = await self._sink.submit(msg)
        notice = press_notice(submission) if msg.choice is not None else None
        if notice:
            await self._tell_presser(ref, activity, notice)

    def _upload_failed(self, error: str) -> None:
        self.note_error(f"file upload failed: {error}", errors.UPLOAD_HINT)

    async def _tell_presser(self, ref: Reference, activity: Any, notice: str) -> None:
        """A press that was not the presser's to make (an approval for someone else): told to
        the presser only, as a targeted message in the thread."""
        assert self.connector is not None
        try:
            await self.connector.tell(ref, activity.conversation.id, activity.from_.id, notice)
        except Exception as exc:
            log.warning("teams press notice failed", extra={"error": type(exc).__name__})

    # -- outbound -------------------------------------------------------------------------------

    def render(self, message: OutboundMessage) -> list[Rendered]:
        return render(message, self._file_link)

    def _file_link(self, file: File) -> str | None:
        """A stored file's signed download URL on the public origin (`public_url`)."""
        files, public = self.ctx.kv.get("files"), self.config.public_url
        if files is None or not public:
            return None
        path = files.link(file, self.ctx.clock.time())
        parts = urlsplit(public)
        return f"{parts.scheme}://{parts.netloc}{path}" if path else None

    async def _where(self, target: Target) -> tuple[Any, str] | SendResult:
        if self.connector is None:
            raise ConnectionError("the Teams channel is not connected")
        ref = await self.connector.reference(target.chat_id)
        if ref is None:
            error = "no conversation reference: the user must message the bot once"
            self.note_error(error, errors.NO_REFERENCE_HINT)
            return SendResult.failed(SendErrorKind.NO_REFERENCE, error)
        return ref, ids.thread_conversation(target.chat_id, target.thread_id)

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        where = await self._where(target)
        if isinstance(where, SendResult):
            return where
        assert self.connector is not None
        activity = rendered.native.get("activity") or {"text": rendered.text}
        file = rendered.native.get(OFFER_KEY)
        ref, conversation = where
        try:
            if isinstance(file, File) and file.ref and self.offers and ref.personal():
                sent = await self.offers.offer(ref, conversation, file)
            else:
                sent = await self.connector.post(ref, conversation, dict(activity))
                await self.cards.sent(target.chat_id, sent, activity)
        except httpx.HTTPStatusError as exc:
            self._refused(exc)
            raise
        return SendResult.sent(sent)

    async def edit(self, target: Target, message_id: str, rendered: Rendered) -> SendResult:
        where = await self._where(target)
        if isinstance(where, SendResult):
            return where
        assert self.connector is not None
        activity = rendered.native.get("activity") or {"text": rendered.text}
        activity = await self.cards.update_of(target.chat_id, message_id, dict(activity))
        try:
            sent = await self.connector.update(*where, message_id, activity)
        except httpx.HTTPStatusError as exc:
            self._refused(exc)
            raise
        return SendResult.sent(sent)

    async def typing(self, target: Target) -> None:
        where = await self._where(target)
        if isinstance(where, SendResult) or self.connector is None:
            return
        await self.connector.typing(*where)

    def _refused(self, exc: httpx.HTTPStatusError) -> None:
        """401 (the token) or 403 (the app) from the connector: park the channel with the fix;
        the reply waits for the operator instead of being thrown away as a dead target."""
        status = exc.response.status_code
        if status not in errors.PARKING or self.connector is None:
            return
        if status == 401:
            self.connector.tokens.forget()
        what = "token" if status == 401 else "app"
        self.fail(
            ChannelError(
                f"the Bot Connector refused the bot's {what} (HTTP {status})",
                kind=SendErrorKind.AUTH_FATAL,
                hint=errors.PARKING[status],
            )
        )

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        """An inline image from the connector (with the bot token) or a shared file (its
        pre-authorised download URL, no token)."""
        if self.connector is None or self._session is None:
            raise FetchError(MediaReason.DOWNLOAD_FAILED, "channel not started")
        url = attachment.handle or ""
        if not url.startswith(("https://", "http://")):
            raise FetchError(MediaReason.DOWNLOAD_FAILED, "no download URL")
        headers: dict[str, str] = {}
        if self.connector.trusted(url) and ATTACHMENTS in url:
            headers["Authorization"] = f"Bearer {await self.connector.tokens.get()}"
        return await stream_to_file(self._session, url, dest, max_bytes, headers=headers)

    def classify_error(self, exc: BaseException) -> SendResult:
        result = errors.classify(exc)
        kind = result.kind or SendErrorKind.UNKNOWN
        hint = errors.hint(kind, errors.status_of(exc))
        self.note_error(f"send failed: {kind.value}: {result.error}", hint)
        log.warning("teams send failed", extra={"kind": kind.value, "error": result.error})
        return result


def _activity(payload: Any) -> Any:
    """The SDK's typed activity, or None when the payload is not one."""
    from microsoft_teams.api.activities import ActivityTypeAdapter
    from pydantic import ValidationError

    if not isinstance(payload, dict):
        return None
    try:
        return ActivityTypeAdapter.validate_python(payload)
    except ValidationError:
        return None


__all__ = ["TeamsChannel"]
