"""The Slack channel adapter (slack-bolt): Socket Mode or the Events API, inbound, status.

slack-bolt is the listener chain: `process_before_response` makes it run our listener (which
journals the event) before it acknowledges, so Slack gets its ack only for what is durable. In
Events API mode the route lives on chatgate's own HTTP server; the body size and the v0
signature are checked here first (on the injected clock), before bolt parses anything. In
Socket Mode slack_sdk keeps the socket alive and reconnects on `disconnect`; a socket that
hears nothing for `stale_after_s` and fails `auth.test` is restarted by the supervisor. An
event that cannot be journaled is refused (503 / no ack), so Slack delivers it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from chatgate.channels.base import ChannelContext, ChannelError, InboundSink, NotConfigured
from chatgate.channels.capabilities import AckMode, Capabilities
from chatgate.channels.download import FilesSession, files_timeout
from chatgate.channels.http_ingress import STATE_RETRY_AFTER_S, signed_ingress
from chatgate.channels.ordering import ChatOrder
from chatgate.channels.slack import LIMITS, errors
from chatgate.channels.slack.config import SlackChannelConfig
from chatgate.channels.slack.events_body import check_events_body
from chatgate.channels.slack.ids import choice_of
from chatgate.channels.slack.inbound import (
    BotIdentity,
    Ignored,
    normalize,
    normalize_action,
    normalize_command,
    normalize_reaction,
)
from chatgate.channels.slack.media import fetch_file
from chatgate.channels.slack.outbound import SlackOutbound
from chatgate.channels.slack.sdk_logs import quiet_dropped_sockets
from chatgate.channels.slack.users import SlackUser, SlackUsers, with_language
from chatgate.config.base import secret_value
from chatgate.http_input import BadInput
from chatgate.model.errors import FetchError, StateUnavailable
from chatgate.model.messages import Attachment, InboundMessage
from chatgate.model.reasons import DropReason, MediaReason, SendErrorKind
from chatgate.model.results import Submission, press_notice
from chatgate.policies.edits import EditMode
from chatgate.policies.reactions import ReactionMode

log = logging.getLogger("chatgate.slack")
sdk_log = logging.getLogger("slack_bolt")
CONNECT_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 10.0
NO_TOKEN_HINT = (
    "set channels.slack.bot_token (api.slack.com/apps → your app → OAuth & Permissions → Bot User "
    "OAuth Token, xoxb-…) or bot_token_file"
)
_ANY = re.compile(r".*")


class Draining(Exception):
    """An event arrived while the channel drains: refused unacked, Slack delivers it again."""


def capabilities(config: SlackChannelConfig) -> Capabilities:
    """Edits, reactions, threads; no typing indicator for bots (the ack reaction stands in)."""
    return Capabilities(
        limits=LIMITS,
        edits=True,
        reactions=True,
        threads=True,
        ack=AckMode.REACTION if config.ack_reaction else AckMode.NONE,
        stream=config.stream.enabled,
        min_edit_interval_s=config.stream.min_edit_interval_s,
    )


class SlackChannel(SlackOutbound):
    COUNTERS = ("events", "reactions", "actions", "commands", "refused", "hello", "disconnect")
    platform = "slack"

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: SlackChannelConfig = ctx.config
        self.identity: BotIdentity | None = None
        self.team = ""
        self._sink: InboundSink | None = None
        self._http: aiohttp.ClientSession | None = None
        self._files = FilesSession(self._files_session)  # url_private, on any replica
        self._bolt: AsyncApp | None = None
        self._socket: Any = None  # AsyncSocketModeHandler in socket mode
        self._route: str | None = None
        self._accepting = False
        self._order = ChatOrder()  # slack_sdk runs each envelope in its own task
        self._last_event = time.monotonic()
        self.users = SlackUsers(ctx.clock)

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        return self.capabilities_of(capabilities)

    async def start(self, sink: InboundSink) -> None:
        token = secret_value(self.config.bot_token)
        if token is None:
            raise NotConfigured("no bot token", NO_TOKEN_HINT)
        self._sink = sink
        timeout = aiohttp.ClientTimeout(total=self.config.request_timeout_s)
        connector = aiohttp.TCPConnector(limit=self.config.send_concurrency)
        self._http = aiohttp.ClientSession(connector=connector, timeout=timeout)
        self.web = AsyncWebClient(
            token=token,
            base_url=self.config.api_base,
            session=self._http,
            timeout=math.ceil(self.config.request_timeout_s),
            logger=sdk_log,
        )
        try:
            auth = await asyncio.wait_for(self.web.auth_test(), CONNECT_TIMEOUT_S)
            self.identity = BotIdentity(
                str(auth["user_id"]),
                str(auth.get("bot_id") or ""),
                str(auth.get("team_id") or ""),
                str(auth.get("user") or ""),
            )
            self.team = str(auth.get("team") or "")
            self._bolt = self._build_app(token)
            if self.config.mode == "events":
                self._route = self.config.events_path
                self.ctx.http.add("POST", self._route, self._events)
            else:
                await self._connect_socket(self._bolt)
        except BaseException as exc:
            await self._close()
            if isinstance(exc, asyncio.CancelledError):
                raise
            error = errors.start_error(exc)
            self.note_error(str(error), error.hint)
            raise error from None
        self._accepting = True
        self._last_event = time.monotonic()
        log.info(
            "slack connected",
            extra={"bot": self.identity.name, "team": self.team, "mode": self.config.mode},
        )

    def _build_app(self, token: str) -> AsyncApp:
        """Bolt authorizes each request through `authorize` from the identity `auth.test` gave
        at start: no extra round trip per process, and a token revoked later reaches our
        send path (which parks the channel) instead of being swallowed by bolt's middleware."""
        identity = self.identity
        assert identity is not None

        async def authorize() -> AuthorizeResult:
            return AuthorizeResult(
                enterprise_id=None,
                team_id=identity.team_id,
                bot_token=token,
                bot_id=identity.bot_id,
                bot_user_id=identity.user_id,
            )

        app = AsyncApp(
            # token-less: with a token bolt would call auth.test itself; sends use `self.web`
            client=AsyncWebClient(base_url=self.config.api_base, session=self._http),
            authorize=authorize,
            signing_secret="",  # verified by `_events` before bolt sees the request
            logger=sdk_log,
            process_before_response=True,  # journal first, then ack
            request_verification_enabled=False,
            ignoring_self_events_enabled=False,  # the loop guard records them with a reason
        )
        app.event("message")(self._on_event)
        app.event("app_mention")(self._on_event)
        app.event("reaction_added")(self._on_reaction)
        app.action(_ANY)(self._on_action)
        app.command(_ANY)(self._on_command)
        app.event(_ANY)(self._on_other_event)
        app.error(self._on_error)
        return app

    async def _connect_socket(self, app: AsyncApp) -> None:
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        app_token = secret_value(self.config.app_token)
        assert app_token is not None  # the config refuses socket mode without one
        try:  # slack_sdk retries a refused token forever: check it once, loudly
            await self.web.apps_connections_open(app_token=app_token)
        except Exception as exc:
            if errors.is_error(exc, *errors.AUTH_ERRORS):
                raise ChannelError(
                    "Slack rejected the app-level token",
                    kind=SendErrorKind.AUTH_FATAL,
                    hint=errors.APP_TOKEN_HINT,
                ) from None
            raise
        quiet_dropped_sockets(sdk_log)
        handler = AsyncSocketModeHandler(
            app, app_token, logger=sdk_log, ping_interval=self.config.ping_interval_s
        )
        handler.client.message_listeners.append(self._heard)
        self._socket = handler
        await asyncio.wait_for(handler.connect_async(), CONNECT_TIMEOUT_S)  # type: ignore[no-untyped-call]

    async def stop_intake(self) -> None:
        """Draining: refuse new events (Slack re-sends them to whoever serves next)."""
        self._accepting = False
        await self._close_socket()

    async def _close_socket(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            with contextlib.suppress(Exception):
                await socket.close_async()

    async def stop(self) -> None:
        await self.stop_intake()
        await self._close()
        await self._files.close()

    async def _close(self) -> None:
        if self._route is not None:
            self.ctx.http.remove(self._route)
            self._route = None
        await self._close_socket()
        http, self._http = self._http, None
        self.web = None
        if http is not None:
            await http.close()

    def stale_after_s(self) -> float | None:
        return self.config.stale_after_s if self.config.mode == "socket" else None

    def idle_for_s(self) -> float | None:
        return time.monotonic() - self._last_event if self.config.mode == "socket" else None

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        """``url_private`` with the bot token, through the files session: also on a replica
        where another holds the Socket Mode connection (no socket opened for it)."""
        token = secret_value(self.config.bot_token)
        if token is None:
            raise FetchError(MediaReason.DOWNLOAD_FAILED, "no bot token")
        return await fetch_file(
            self._files.get(), token, self.config.api_base, attachment, dest, max_bytes
        )

    def _files_session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=self.config.send_concurrency),
            timeout=files_timeout(self.config.request_timeout_s),
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def probe(self) -> bool:
        """The socket is open (Socket Mode) and `auth.test` answers."""
        if self.web is None:
            return False
        if self.config.mode == "socket":
            socket = self._socket
            if socket is None or not await socket.client.is_connected():
                return False
        try:
            await asyncio.wait_for(self.web.auth_test(), PROBE_TIMEOUT_S)
        except Exception:
            return False
        return True

    def reconfigure(self, config: Any) -> None:
        super().reconfigure(config)
        self.config = config

    def status(self) -> dict[str, Any]:
        bot = self.identity.name if self.identity else "?"
        connected = self._socket is not None and self.counters["hello"] > 0
        where = (
            f"events at {self.config.events_path}"
            if self.config.mode == "events"
            else ("socket connected" if connected else "socket not connected")
        )
        detail: dict[str, Any] = {
            "mode": self.config.mode,
            "team": self.team or None,
            "team_id": self.identity.team_id if self.identity else None,
            "bot": bot if self.identity else None,
            "bot_user_id": self.identity.user_id if self.identity else None,
            "counters": dict(self.counters),
        }
        if self.identity is not None:  # nothing to summarise before the first auth.test
            detail["summary"] = f"@{bot} · {self.team or '?'} · {where}"
        detail.update(self.tallies())
        return detail

    # -- Events API route -------------------------------------------------------------------

    async def _events(self, request: web.Request) -> web.StreamResponse:
        def refused(why: str) -> None:
            self.ctx.metrics.count("slack_bad_signature", channel=self.name)
            log.warning("slack request refused", extra={"why": why, "peer": request.remote})

        body = await signed_ingress(
            request,
            limit=self.config.max_body_bytes,
            kind="slack",
            secret=secret_value(self.config.signing_secret),
            now=self.ctx.clock.time,
            refused=refused,
            accepting=lambda: self._accepting and self._bolt is not None,
            error="invalid request",
        )
        if isinstance(body, web.Response):
            return body
        assert self._bolt is not None
        try:
            text = check_events_body(body, request.content_type)
        except BadInput as bad:
            return bad.answer()
        headers: dict[str, str | Sequence[str]] = dict(request.headers.items())
        bolt_request = AsyncBoltRequest(body=text, query=request.query_string, headers=headers)
        answer = await self._bolt.async_dispatch(bolt_request)
        kind = answer.headers.pop("content-type", ["text/plain"])[0].split(";")[0]
        return web.Response(
            status=answer.status,
            body=answer.body,
            headers=answer.first_headers_without_set_cookie(),
            content_type=kind,
        )

    # -- listeners ----------------------------------------------------------------------------

    async def _heard(self, client: Any, message: dict[str, Any], raw: str | None) -> None:
        """Every Socket Mode frame: proof the socket is alive (the stall watchdog reads it)."""
        self._last_event = time.monotonic()
        kind = message.get("type")
        if kind in ("hello", "disconnect"):
            self.counters[kind] += 1

    async def _on_event(self, event: dict[str, Any]) -> None:
        self._last_event = time.monotonic()
        self.counters["events"] += 1
        if self.identity is None:
            return
        result = normalize(
            event, self.identity, self.name, engaged=self.engaged, edits=EditMode(self.config.edits)
        )
        if isinstance(result, InboundMessage) and await self._continues_thread(result, event):
            result = replace(result, is_mention=True)
        if isinstance(result, InboundMessage) and self._may_answer(result):
            result = with_language(result, await self._user(result.sender_id))
        await self._submit(result)

    def _may_answer(self, msg: InboundMessage) -> bool:
        """Whether the sender's language can matter: a DM, a message addressing the bot, or
        any channel message under `respond_all` (others are dropped or kept as context, so
        no users.info call is spent on every passer-by in a busy channel)."""
        return (
            msg.chat_kind == "direct" or msg.is_mention or self.config.group_policy == "respond_all"
        )

    async def _on_reaction(self, event: dict[str, Any]) -> None:
        """A person's reaction on one of our answers, per the channel's `reactions`."""
        self._last_event = time.monotonic()
        self.counters["reactions"] += 1
        if self.identity is None:
            return
        mode = ReactionMode(self.config.reactions)
        user = str(event.get("user") or "")
        facts = (
            await self._user(user)
            if mode is not ReactionMode.IGNORE and user != self.identity.user_id
            else SlackUser()
        )
        result = normalize_reaction(
            event, self.identity, self.name, mode, self.answers, from_bot=facts.is_bot
        )
        if isinstance(result, InboundMessage):
            result = with_language(result, facts)
        await self._submit(result)

    async def _user(self, user: str) -> SlackUser:
        """The sender's locale and bot flag (users.info, cached); unknown on any failure."""
        if not user or self.web is None:
            return SlackUser()
        web = self.web
        return await self.users.get(user, lambda u: web.users_info(user=u, include_locale=True))

    async def _continues_thread(self, msg: InboundMessage, event: dict[str, Any]) -> bool:
        """An unmentioned reply in a channel thread addresses the bot when that thread is a
        conversation with history (the bot answered there, maybe before a restart or on
        another replica)."""
        if msg.is_mention or msg.chat_kind == "direct" or not event.get("thread_ts"):
            return False
        return self._sink is not None and await self._sink.in_conversation(msg)

    async def _on_action(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A button or select press: journaled first, then acknowledged (Slack allows 3 s)."""
        self._last_event = time.monotonic()
        self.counters["actions"] += 1
        result = normalize_action(body, choice_of(action), self.name)
        if isinstance(result, InboundMessage):
            result = await self.resolve_choice(result)
        submission = await self._submit(result)
        await ack()
        notice = press_notice(submission) if submission is not None else None
        if notice and isinstance(result, InboundMessage):
            await self.tell_presser(result, notice)

    async def _on_command(self, ack: Any, body: dict[str, Any]) -> None:
        """A slash command: journaled, then acknowledged with no text (the answer follows)."""
        self._last_event = time.monotonic()
        self.counters["commands"] += 1
        await self._submit(normalize_command(body, self.name, self.config.slash_command))
        await ack()

    async def _on_other_event(self, event: dict[str, Any]) -> None:
        self._ignore(Ignored(DropReason.SYSTEM_MESSAGE, str(event.get("channel") or "")))

    async def _on_error(self, error: Exception) -> BoltResponse | None:
        """A refused event answers 503 (Events API) or goes unacked (Socket Mode)."""
        if isinstance(error, StateUnavailable | Draining):
            self.counters["refused"] += 1
            if isinstance(error, StateUnavailable):
                self.ctx.metrics.count("slack_refused_unwritable_state", channel=self.name)
            return BoltResponse(
                status=503,
                body='{"error": "cannot store events right now"}',
                headers={
                    "content-type": "application/json",
                    "retry-after": str(STATE_RETRY_AFTER_S),
                },
            )
        log.error("slack event failed", extra={"error": type(error).__name__})
        return None

    async def _submit(self, result: InboundMessage | Ignored) -> Submission | None:
        if isinstance(result, Ignored):
            self._ignore(result)
            return None
        if not self._accepting or self._sink is None:
            raise Draining
        async with self._order.turn(f"{result.chat_id}:{result.thread_id}"):
            return await self._sink.submit(result)

    def _ignore(self, ignored: Ignored) -> None:
        self.note_ignored(ignored.reason, ignored.chat_id, self._sink)


__all__ = ["SlackChannel"]
