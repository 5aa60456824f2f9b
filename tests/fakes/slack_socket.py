"""Slack-to-app half of the fake Slack: Socket Mode, signed Events API pushes, event builders.

Socket Mode as slack_sdk's aiohttp client expects it: the server greets every ``/link/``
socket with ``hello``, wraps each event or interaction in an envelope, and the client
answers ``{"envelope_id": ...}`` (with a ``payload`` for commands/views). Envelopes never
acked are redelivered on a later socket with ``retry_attempt`` + 1 and a ``retry_reason``.
``{"type": "disconnect"}`` makes the client fetch a new URL from ``apps.connections.open``.
aiohttp pongs the SDK's pings itself (``autoping``), as Slack does, so the SDK's
stale-connection monitor stays quiet. HTTP mode: event_callback / url_verification /
interactivity bodies POSTed with Slack's v0 signature, as a real Slack workspace would.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import hmac
import json
import time
import urllib.parse
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from aiohttp import ClientSession, ClientTimeout, WSMsgType, web

JSONDict = dict[str, Any]
_T = TypeVar("_T")

BOT_TOKEN: Final = "xoxb-1-fake-bot-token"  # slack_bolt needs the xoxb- prefix for bot_user_id
APP_TOKEN: Final = "xapp-1-A1-fake-app-token"
SIGNING_SECRET: Final = "fake-signing-secret"
VERIFICATION_TOKEN: Final = "fake-verification-token"
TEAM_ID: Final = "T1"
TEAM_NAME: Final = "Fake Team"
TEAM_DOMAIN: Final = "fake"
APP_ID: Final = "A1"
BOT_USER_ID: Final = "UBOT"
BOT_ID: Final = "BBOT"
BOT_NAME: Final = "chatgate"


def sign(secret: str, timestamp: int | str, body: str | bytes) -> str:
    """Slack's v0 request signature: ``v0=hex(hmac_sha256(secret, "v0:{ts}:{body}"))``."""
    raw = body if isinstance(body, bytes) else body.encode()
    base = b"v0:" + str(timestamp).encode() + b":" + raw
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


class Signal:
    """Wakes every current waiter each time it fires (an Event that re-arms itself)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, seconds: float | None) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), seconds)


async def wait_until(
    signal: Signal, probe: Callable[[], _T | None], timeout: float, explain: Callable[[], str]
) -> _T:
    """Re-run `probe` whenever `signal` fires until it returns non-None; AssertionError on timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = probe()
        if result is not None:
            return result
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise AssertionError(explain())
        await signal.wait(remaining)


@dataclass
class SocketConnection:
    """One accepted ``/link/`` WebSocket; `ready` once hello and backlog were written."""

    id: int
    ticket: str
    ws: web.WebSocketResponse
    transport: asyncio.Transport | None
    opened_at: float
    ready: bool = False
    closed_at: float | None = None

    @property
    def is_open(self) -> bool:
        return self.closed_at is None and not self.ws.closed


@dataclass(frozen=True)
class Ack:
    """A client frame carrying an ``envelope_id``; `payload` is the optional response body."""

    envelope_id: str
    payload: JSONDict | None
    connection_id: int
    at: float


@dataclass
class Envelope:
    """An envelope as last written; `connection_id` is the socket of the latest delivery."""

    envelope_id: str
    type: str
    payload: JSONDict
    accepts_response_payload: bool
    retry_attempt: int = 0
    retry_reason: str = ""
    connection_id: int | None = None
    deliveries: int = 0
    ack: Ack | None = None

    def message(self) -> JSONDict:
        return {
            "envelope_id": self.envelope_id,
            "type": self.type,
            "accepts_response_payload": self.accepts_response_payload,
            "retry_attempt": self.retry_attempt,
            "retry_reason": self.retry_reason,
            "payload": self.payload,
        }


class SlackInbound:
    """Slack-to-app traffic (socket, envelopes, signed HTTP pushes, event builders) plus the
    message store they share with the Web API; FakeSlack inherits it to keep one flat API."""

    def __init__(self, *, app_id: str, redeliver_unacked: bool, redelivery_reason: str) -> None:
        self.app_id = app_id
        self.redeliver = redeliver_unacked
        self.redelivery_reason = redelivery_reason
        self.all_connections: list[SocketConnection] = []
        self.envelopes: list[Envelope] = []
        self._unacked: dict[str, Envelope] = {}  # by envelope_id: an ack finds its envelope at once
        self.acks: list[Ack] = []
        self.stray_frames: list[str] = []  # client text frames that were not acks
        self.tickets: set[str] = set()
        self._socket_signal = Signal()
        self._envelope_seq = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0
        self._messages: dict[tuple[str, str], JSONDict] = {}  # (channel, ts) -> message
        self._last_us: dict[str, int] = defaultdict(int)
        self._channels: dict[str, JSONDict] = {}
        self._event_seq = 0
        self._session: ClientSession | None = None

    # connections

    @property
    def connections(self) -> list[SocketConnection]:
        """Sockets that are open and greeted, oldest first."""
        return [c for c in self.all_connections if c.ready and c.is_open]

    def issue_ticket(self) -> str:
        """A ``/link/`` ticket; it stays valid, as the SDK retries a failed connect on one URL."""
        ticket = uuid.uuid4().hex
        self.tickets.add(ticket)
        return ticket

    async def wait_connected(self, n: int = 1, timeout: float = 5.0) -> SocketConnection:
        """The `n`-th socket ever greeted (1-based), once it exists: counts reconnects."""

        def probe() -> SocketConnection | None:
            greeted = [c for c in self.all_connections if c.ready]
            return greeted[n - 1] if len(greeted) >= n else None

        return await wait_until(
            self._socket_signal,
            probe,
            timeout,
            lambda: f"expected socket #{n} within {timeout}s; {len(self.all_connections)} seen",
        )

    async def disconnect(
        self, reason: str = "refresh_requested", connection: SocketConnection | None = None
    ) -> None:
        """Send Slack's ``disconnect`` message; the SDK then reconnects via a new URL."""
        message = json.dumps(
            {"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake"}}
        )
        for conn in [connection] if connection else self.connections:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await conn.ws.send_str(message)

    def drop_socket(self, connection: SocketConnection | None = None) -> None:
        """Abort the TCP connection(s) with no close frame, like a network failure."""
        for conn in [connection] if connection else self.connections:
            conn.closed_at = conn.closed_at or time.monotonic()
            if conn.transport is not None:
                conn.transport.abort()
        self._after_close()

    async def close_socket(
        self, code: int = 1001, connection: SocketConnection | None = None
    ) -> None:
        """Close gracefully with a WebSocket close frame (the SDK reconnects at once)."""
        for conn in [connection] if connection else self.connections:
            await conn.ws.close(code=code, message=b"fake close")

    # envelopes and acks

    async def _push(self, kind: str, payload: JSONDict, accepts_response: bool) -> Envelope:
        """Wrap and send to the newest socket; with none open it is queued for the next one."""
        self._envelope_seq += 1
        envelope = Envelope(str(uuid.UUID(int=self._envelope_seq)), kind, payload, accepts_response)
        self.envelopes.append(envelope)
        self._unacked[envelope.envelope_id] = envelope
        target = self.connections[-1] if self.connections else None
        if target is not None:
            await self._send(target, envelope)
        return envelope

    async def _send(self, conn: SocketConnection, envelope: Envelope) -> None:
        # Mark first, so a concurrent flush never sends it twice; a lost write gets redelivered.
        envelope.connection_id = conn.id
        envelope.deliveries += 1
        with contextlib.suppress(ConnectionError, RuntimeError):
            await conn.ws.send_str(json.dumps(envelope.message()))

    def _needs_delivery(self, envelope: Envelope) -> bool:
        if envelope.ack is not None:
            return False
        if envelope.connection_id is None:
            return True
        previous = self.all_connections[envelope.connection_id - 1]
        return self.redeliver and not previous.is_open

    async def _flush(self, conn: SocketConnection, *, force: bool = False) -> None:
        """(Re)deliver every envelope that is pending, or whose socket died, to `conn`."""
        while conn.is_open:
            batch = [
                e
                for e in self.envelopes
                if self._needs_delivery(e) or (force and e.ack is None and e.connection_id)
            ]
            if not batch:
                return
            for envelope in batch:
                if envelope.connection_id is not None:
                    envelope.retry_attempt += 1
                    envelope.retry_reason = self.redelivery_reason
                await self._send(conn, envelope)
            force = False

    async def redeliver_unacked(self) -> None:
        """Resend every unacked envelope now with retry_attempt + 1, as Slack does on timeout."""
        if self.connections:
            await self._flush(self.connections[-1], force=True)

    def acked(self, envelope_id: str) -> bool:
        """Whether the client has acked `envelope_id` at least once."""
        return any(a.envelope_id == envelope_id for a in self.acks)

    def unacked(self) -> list[Envelope]:
        """Envelopes pushed but not acked yet (whether delivered or still queued)."""
        return [e for e in self.envelopes if e.ack is None]

    async def wait_acked(self, envelope_id: str, timeout: float = 5.0) -> Ack:
        """The first ack of `envelope_id`, once it arrives."""

        def probe() -> Ack | None:
            return next((a for a in self.acks if a.envelope_id == envelope_id), None)

        return await wait_until(
            self._socket_signal,
            probe,
            timeout,
            lambda: f"envelope {envelope_id} not acked within {timeout}s; acks: {self.acks!r:.500}",
        )

    # WebSocket endpoint

    def _hello(self) -> JSONDict:
        return {
            "type": "hello",
            "num_connections": len(self.connections) + 1,
            "debug_info": {"host": "applink-fake", "approximate_connection_time": 18060},
            "connection_info": {"app_id": self.app_id},
        }

    async def _handle_link(self, request: web.Request) -> web.StreamResponse:
        if request.query.get("ticket") not in self.tickets:
            return web.Response(status=401, text="invalid ticket")
        transport = request.transport
        ws = web.WebSocketResponse()  # autoping: pongs the SDK's pings like Slack does
        await ws.prepare(request)
        conn = SocketConnection(
            len(self.all_connections) + 1, request.query["ticket"], ws, transport, time.monotonic()
        )
        self.all_connections.append(conn)
        try:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await ws.send_str(json.dumps(self._hello()))
                await self._flush(conn)
            conn.ready = True
            self._socket_signal.fire()
            async for frame in ws:
                if frame.type == WSMsgType.TEXT:
                    self._on_frame(conn, frame.data)
        finally:
            conn.closed_at = conn.closed_at or time.monotonic()
            self._after_close()
        return ws

    def _on_frame(self, conn: SocketConnection, data: str) -> None:
        try:
            frame = json.loads(data)
        except ValueError:
            frame = None
        if not isinstance(frame, dict) or not isinstance(frame.get("envelope_id"), str):
            self.stray_frames.append(data)
            return
        payload = frame.get("payload")
        body = payload if isinstance(payload, dict) else None
        ack = Ack(frame["envelope_id"], body, conn.id, time.monotonic())
        self.acks.append(ack)
        envelope = self._unacked.pop(ack.envelope_id, None)
        if envelope is not None:
            envelope.ack = ack
        self._socket_signal.fire()

    def _after_close(self) -> None:
        """Hand envelopes orphaned by a closed socket to a surviving one, if any."""
        self._socket_signal.fire()
        if self.redeliver and self.connections and any(map(self._needs_delivery, self.envelopes)):
            task = asyncio.ensure_future(self._flush(self.connections[-1]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _close_inbound(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for conn in self.all_connections:
            if conn.is_open and conn.transport is not None:
                conn.transport.abort()
        self._socket_signal.fire()
        if self._session is not None:
            await self._session.close()
            self._session = None

    # event builders

    def next_ts(self, channel: str) -> str:
        """A Slack ts ("sec.micro") from the clock, strictly increasing per channel."""
        us = max(int(time.time() * 1_000_000), self._last_us[channel] + 1)
        self._last_us[channel] = us
        return f"{us // 1_000_000}.{us % 1_000_000:06d}"

    def message_event(
        self,
        text: str,
        user: str = "U42",
        channel: str = "D1",
        channel_type: str = "im",
        ts: str | None = None,
        thread_ts: str | None = None,
        bot_id: str | None = None,
        subtype: str | None = None,
        **extra: Any,
    ) -> JSONDict:
        """A ``message`` event as Slack sends it; also stored so reactions/threads line up."""
        ts = ts or self.next_ts(channel)
        event: JSONDict = {"type": "message", "channel": channel, "user": user, "text": text}
        event.update(ts=ts, event_ts=ts, channel_type=channel_type, team=TEAM_ID)
        if subtype is None and bot_id is None:
            event["client_msg_id"] = f"cmsg-{channel}-{ts}"
        for key, value in (("thread_ts", thread_ts), ("bot_id", bot_id), ("subtype", subtype)):
            if value is not None:
                event[key] = value
        event.update(extra)
        self._messages.setdefault((channel, ts), {k: v for k, v in event.items() if k != "channel"})
        return event

    def app_mention_event(
        self,
        text: str,
        user: str = "U42",
        channel: str = "C1",
        ts: str | None = None,
        thread_ts: str | None = None,
        **extra: Any,
    ) -> JSONDict:
        """An ``app_mention`` event; ``<@UBOT>`` is prefixed unless the text mentions the bot."""
        mention = f"<@{BOT_USER_ID}>"
        body = text if mention in text else f"{mention} {text}"
        event = self.message_event(body, user, channel, "channel", ts, thread_ts, **extra)
        event["type"] = "app_mention"
        for key in ("channel_type", "client_msg_id"):
            event.pop(key, None)
        return event

    def edited_event(self, original: JSONDict, text: str) -> JSONDict:
        """The ``message_changed`` event Slack sends when a user edits ``original``."""
        channel, ts = str(original["channel"]), str(original["ts"])
        before = {k: v for k, v in original.items() if k not in ("channel", "channel_type")}
        before["type"] = "message"
        changed = {**before, "text": text, "edited": {"user": original.get("user"), "ts": ""}}
        changed["edited"]["ts"] = self.next_ts(channel)
        self._messages[(channel, ts)] = changed
        event: JSONDict = {"type": "message", "subtype": "message_changed", "hidden": True}
        event.update(channel=channel, message=changed, previous_message=before)
        event.update(ts=changed["edited"]["ts"], event_ts=changed["edited"]["ts"])
        if original.get("channel_type"):
            event["channel_type"] = original["channel_type"]
        return event

    def reaction_event(
        self, channel: str, ts: str, reaction: str = "thumbsup", user: str = "U42"
    ) -> JSONDict:
        """A ``reaction_added`` event on the message ``ts``; ``item_user`` is its author."""
        author = (self._messages.get((channel, ts)) or {}).get("user")
        event: JSONDict = {"type": "reaction_added", "user": user, "reaction": reaction}
        event["item"] = {"type": "message", "channel": channel, "ts": ts}
        if author:
            event["item_user"] = author
        event["event_ts"] = self.next_ts(channel)
        return event

    def block_actions_payload(
        self,
        action_id: str,
        value: str,
        user: str = "U42",
        channel: str = "C1",
        message_ts: str | None = None,
        *,
        block_id: str = "actions",
        text: str = "Button",
    ) -> JSONDict:
        """A button click on `message_ts` (default: the bot's latest post in `channel`)."""
        own = [
            t
            for (c, t), m in self._messages.items()
            if c == channel and m.get("user") == BOT_USER_ID
        ]
        ts = message_ts or (own[-1] if own else self.next_ts(channel))
        message = self._messages.get((channel, ts)) or {"type": "message", "ts": ts, "text": ""}
        action: JSONDict = {"type": "button", "action_id": action_id, "value": value}
        action.update(block_id=block_id, text={"type": "plain_text", "text": text})
        action["action_ts"] = f"{time.time():.6f}"
        return {
            "type": "block_actions",
            "user": {
                "id": user,
                "username": user.lower(),
                "name": user.lower(),
                "team_id": TEAM_ID,
            },
            "api_app_id": self.app_id,
            "token": VERIFICATION_TOKEN,
            "container": {"type": "message", "message_ts": ts, "channel_id": channel},
            "trigger_id": f"trig-{ts}",
            "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
            "is_enterprise_install": False,
            "channel": {"id": channel, "name": f"chan-{channel.lower()}"},
            "message": copy.deepcopy(message),
            "state": {"values": {}},
            "response_url": f"http://127.0.0.1:{self.port}/response/{ts}",
            "actions": [action],
        }

    def event_callback(self, event: JSONDict, *, event_id: str | None = None) -> JSONDict:
        """The ``event_callback`` body Slack wraps every event in (HTTP and Socket Mode)."""
        self._event_seq += 1
        auth = {"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}
        return {
            "token": VERIFICATION_TOKEN,
            "team_id": TEAM_ID,
            "context_team_id": TEAM_ID,
            "api_app_id": self.app_id,
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{self._event_seq:08d}",
            "event_time": int(time.time()),
            "authorizations": [{**auth, "enterprise_id": None, "is_enterprise_install": False}],
            "is_ext_shared_channel": False,
        }

    # Socket Mode pushes

    async def push_event(self, event: JSONDict, *, event_id: str | None = None) -> Envelope:
        """Send an ``events_api`` envelope (queued until a socket is connected)."""
        return await self._push("events_api", self.event_callback(event, event_id=event_id), False)

    async def push_interactive(self, payload: JSONDict) -> Envelope:
        """Send an ``interactive`` envelope (block_actions, view_submission, ...)."""
        accepts = payload.get("type") in ("view_submission", "block_suggestion")
        return await self._push("interactive", payload, accepts)

    async def push_slash_command(
        self, command: str, text: str = "", user: str = "U42", channel: str = "C1"
    ) -> Envelope:
        """Send a ``slash_commands`` envelope; the client may ack with a response payload."""
        payload = {
            "token": VERIFICATION_TOKEN,
            "team_id": TEAM_ID,
            "team_domain": TEAM_DOMAIN,
            "channel_id": channel,
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": self.app_id,
            "is_enterprise_install": "false",
            "response_url": f"http://127.0.0.1:{self.port}/response/cmd-{len(self.envelopes)}",
            "trigger_id": f"trig-cmd-{len(self.envelopes)}",
        }
        return await self._push("slash_commands", payload, True)

    # Events API pushes (HTTP mode)

    async def post_event(
        self,
        url: str,
        event: JSONDict,
        *,
        signing_secret: str = SIGNING_SECRET,
        retry_num: int | None = None,
        retry_reason: str | None = None,
        timestamp: int | None = None,
        bad_signature: bool = False,
        event_id: str | None = None,
    ) -> tuple[int, str]:
        """POST a signed event_callback like Slack; returns (status, body)."""
        body = json.dumps(self.event_callback(event, event_id=event_id))
        headers: dict[str, str] = {}
        if retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(retry_num)
        if retry_reason is not None:
            headers["X-Slack-Retry-Reason"] = retry_reason
        return await self._post_signed(
            url, body, "application/json", signing_secret, timestamp, bad_signature, headers
        )

    async def post_url_verification(
        self,
        url: str,
        *,
        challenge: str = "fake-challenge-3eZbrw1aBm2rZgRNFdxV",
        signing_secret: str = SIGNING_SECRET,
        timestamp: int | None = None,
        bad_signature: bool = False,
    ) -> tuple[int, str]:
        """POST the signed ``url_verification`` handshake; a Bolt app echoes the challenge."""
        body = json.dumps(
            {"token": VERIFICATION_TOKEN, "challenge": challenge, "type": "url_verification"}
        )
        return await self._post_signed(
            url, body, "application/json", signing_secret, timestamp, bad_signature, {}
        )

    async def post_interactive(
        self,
        url: str,
        payload: JSONDict,
        *,
        signing_secret: str = SIGNING_SECRET,
        timestamp: int | None = None,
        bad_signature: bool = False,
    ) -> tuple[int, str]:
        """POST an interaction the way Slack does: form-encoded ``payload=<json>``, signed."""
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        form = "application/x-www-form-urlencoded"
        return await self._post_signed(
            url, body, form, signing_secret, timestamp, bad_signature, {}
        )

    async def post_signed(
        self, url: str, body: str, content_type: str = "application/json"
    ) -> tuple[int, str]:
        """POST any body, correctly signed (a hostile or malformed request from a signer)."""
        return await self._post_signed(url, body, content_type, SIGNING_SECRET, None, False, {})

    async def _post_signed(
        self,
        url: str,
        body: str,
        content_type: str,
        secret: str,
        timestamp: int | None,
        bad_signature: bool,
        headers: dict[str, str],
    ) -> tuple[int, str]:
        ts = int(time.time()) if timestamp is None else timestamp
        signature = sign(secret + ("-wrong" if bad_signature else ""), ts, body)
        headers = {
            **headers,
            "Content-Type": content_type,
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            "X-Slack-Request-Timestamp": str(ts),
            "X-Slack-Signature": signature,
        }
        if self._session is None:
            self._session = ClientSession(timeout=ClientTimeout(total=10))
        async with self._session.post(url, data=body.encode(), headers=headers) as resp:
            return resp.status, await resp.text()
