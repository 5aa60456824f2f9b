"""The gateway half of the fake Discord: a WebSocket server speaking gateway v10 (JSON, TEXT frames).

It sends HELLO, ACKs heartbeats, answers IDENTIFY with READY (+ GUILD_CREATE per guild on the
shard) and RESUME with the missed events + RESUMED, and keeps one session per IDENTIFY so that
events dispatched while a client is away are replayed when it resumes. Tests steer it with
``dispatch``, ``drop_socket``, ``close``, ``send_reconnect`` and ``invalidate_session``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from aiohttp import WSMsgType, web

from tests.fakes.discord_payloads import (
    APP_ID,
    GUILDS_INTENT,
    PRIVILEGED_INTENTS,
    RESUME_GATEWAY_URL,
    JSONDict,
)

DEFAULT_HEARTBEAT_MS: Final = 41_250
# Close codes after which discord.py gives up (gateway.py:_can_handle_close) and after which
# Discord forgets the session (4007 invalid seq, 4009 session timed out).
FATAL_CLOSE_CODES: Final = frozenset({4004, 4010, 4011, 4012, 4013, 4014})
SESSION_ENDING_CODES: Final = FATAL_CLOSE_CODES | {4007, 4009}
_CLOSE_REASONS: Final = {
    4000: "Unknown error",
    4004: "Authentication failed.",
    4005: "Already authenticated.",
    4007: "Invalid seq",
    4009: "Session timed out",
    4010: "Invalid shard",
    4011: "Sharding required",
    4013: "Invalid intent(s)",
    4014: "Disallowed intent(s)",
}


@dataclass(frozen=True)
class GatewayFrame:
    """One payload a client sent: connection number, op, d, shard (once identified)."""

    conn: int
    op: int
    d: Any
    shard: tuple[int, int] | None
    at: float


@dataclass
class _Close:
    code: int
    done: asyncio.Future[None]


_STOP: Final = object()


@dataclass(eq=False)
class _Conn:
    id: int
    ws: web.WebSocketResponse
    transport: asyncio.Transport | None
    outbox: asyncio.Queue[object] = field(default_factory=asyncio.Queue)
    session: _Session | None = None

    def send(self, payload: JSONDict) -> None:
        self.outbox.put_nowait(json.dumps(payload))


@dataclass(eq=False)
class _Session:
    """What Discord keeps per IDENTIFY: seq counter and the dispatch log RESUME replays from."""

    session_id: str
    shard_id: int
    shard_count: int
    intents: int
    seq: int = 0
    log: list[tuple[int, str]] = field(default_factory=list)
    conn: _Conn | None = None

    def emit(self, event: str, data: Any) -> int:
        self.seq += 1
        frame = json.dumps({"op": 0, "s": self.seq, "t": event, "d": data})
        self.log.append((self.seq, frame))
        if self.conn is not None:
            self.conn.outbox.put_nowait(frame)
        return self.seq


class Signal:
    """Wakes every current waiter each time it fires (an Event that re-arms itself)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), seconds)


def shard_for(guild_id: int | None, shard_count: int) -> int:
    """Discord's routing: guild events by ``(guild_id >> 22) % shards``, DMs on shard 0."""
    return 0 if guild_id is None else (guild_id >> 22) % shard_count


class GatewayServer:
    """Gateway state and controls; FakeDiscord subclasses it and supplies the world hooks."""

    def __init__(self, *, heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_MS) -> None:
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.ack_heartbeats = True  # False: clients see a zombie connection and reconnect
        self.enabled_privileged_intents = PRIVILEGED_INTENTS  # IDENTIFY asking for more → 4014
        self.frames: list[GatewayFrame] = []
        self.identifies: list[JSONDict] = []  # every IDENTIFY d received
        self.resumes: list[JSONDict] = []  # every RESUME d received
        self.identify_count = 0  # IDENTIFYs answered with READY
        self.resume_count = 0  # RESUMEs answered with RESUMED
        self.heartbeat_count = 0
        self.gateway_connections = 0
        self._sessions: dict[str, _Session] = {}
        self._conns: set[_Conn] = set()
        self._conn_ids = itertools.count(1)
        self._session_ids = itertools.count(1)
        self._gateway_signal = Signal()

    # hooks FakeDiscord provides

    def _token_valid(self, token: Any) -> bool:
        raise NotImplementedError

    def _bot_user(self) -> JSONDict:
        raise NotImplementedError

    def _guild_ids(self) -> list[int]:
        raise NotImplementedError

    def _guild_create(self, guild_id: int) -> JSONDict:
        raise NotImplementedError

    # controls

    def dispatch(self, event: str, data: JSONDict, *, shard_id: int | None = None) -> int:
        """Send event `event` to the sessions Discord would route it to (by ``data["guild_id"]``,
        DMs to shard 0) or to `shard_id`; sessions whose client is away log it for RESUME.
        Returns the number of sessions; RuntimeError when there is none."""
        raw_guild = data.get("guild_id")
        guild_id = int(raw_guild) if raw_guild is not None else None
        targets = [
            session
            for session in self._sessions.values()
            if session.shard_id
            == (shard_id if shard_id is not None else shard_for(guild_id, session.shard_count))
        ]
        if not targets:
            raise RuntimeError(f"no gateway session to receive {event}; await wait_identified()")
        for session in targets:
            session.emit(event, data)
        return len(targets)

    async def drop_socket(self, *, shard_id: int | None = None) -> int:
        """Abort the TCP connection(s) without a close frame; the session stays resumable."""
        conns = self._live(shard_id)
        for conn in conns:
            self._detach(conn)
            if conn.transport is not None:
                conn.transport.abort()
        await asyncio.sleep(0)
        return len(conns)

    async def close(self, code: int = 4000, *, shard_id: int | None = None) -> int:
        """Close live socket(s) with `code` after the frames already queued; codes in
        SESSION_ENDING_CODES also forget the session. Returns the number closed."""
        conns = self._live(shard_id)
        waits = [self._close_conn(conn, code) for conn in conns]
        if waits:
            await asyncio.wait(waits, timeout=5.0)
        return len(conns)

    def send_reconnect(self, *, shard_id: int | None = None) -> int:
        """Op 7: the client closes and RESUMEs."""
        return self._broadcast({"op": 7, "d": None}, shard_id)

    def invalidate_session(self, resumable: bool = False, *, shard_id: int | None = None) -> int:
        """Op 9; with ``resumable=False`` the session is forgotten and the client re-IDENTIFYs."""
        conns = self._live(shard_id)
        for conn in conns:
            conn.send({"op": 9, "d": resumable})
            if not resumable and conn.session is not None:
                self._sessions.pop(conn.session.session_id, None)
                self._detach(conn)
        return len(conns)

    @property
    def connected_shards(self) -> list[int]:
        """Shard ids with an identified, live connection (sorted; repeats if clients share one)."""
        return sorted(c.session.shard_id for c in self._conns if c.session is not None)

    @property
    def session_ids(self) -> list[str]:
        return list(self._sessions)

    async def wait_identified(self, count: int = 1, *, timeout: float = 5.0) -> None:
        """Until `count` IDENTIFYs were answered with READY in total."""
        await self.wait_gateway(lambda: self.identify_count >= count, timeout, f"{count} READY")

    async def wait_resumed(self, count: int = 1, *, timeout: float = 5.0) -> None:
        """Until `count` RESUMEs were answered with RESUMED in total."""
        await self.wait_gateway(lambda: self.resume_count >= count, timeout, f"{count} RESUMED")

    async def wait_gateway(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        """Wait until `predicate()` holds after some gateway traffic; AssertionError on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                ops = [(f.conn, f.op) for f in self.frames[-12:]]
                raise AssertionError(
                    f"gateway: no {what} within {timeout}s; identify_count={self.identify_count}"
                    f" resume_count={self.resume_count}, latest (conn, op): {ops}"
                )
            await self._gateway_signal.wait(remaining)

    # internals

    def _live(self, shard_id: int | None) -> list[_Conn]:
        return [
            conn
            for conn in self._conns
            if conn.session is not None and shard_id in (None, conn.session.shard_id)
        ]

    def _broadcast(self, payload: JSONDict, shard_id: int | None) -> int:
        conns = self._live(shard_id)
        for conn in conns:
            conn.send(payload)
        return len(conns)

    def _close_conn(self, conn: _Conn, code: int) -> asyncio.Future[None]:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        session = self._detach(conn)
        if session is not None and code in SESSION_ENDING_CODES:
            self._sessions.pop(session.session_id, None)
        conn.outbox.put_nowait(_Close(code, done))
        return done

    @staticmethod
    def _detach(conn: _Conn) -> _Session | None:
        session, conn.session = conn.session, None
        if session is not None and session.conn is conn:
            session.conn = None
        return session

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        """GET / with a WebSocket upgrade (any query: v, encoding and compress are ignored)."""
        ws = web.WebSocketResponse(timeout=2.0, autoping=True, compress=False, max_msg_size=0)
        if not ws.can_prepare(request).ok:
            raise web.HTTPNotFound()
        await ws.prepare(request)
        conn = _Conn(next(self._conn_ids), ws, request.transport)
        self._conns.add(conn)
        self.gateway_connections += 1
        writer = asyncio.create_task(self._write(conn))
        conn.send({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}})
        try:
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    self._on_frame(conn, json.loads(msg.data))
        finally:
            self._conns.discard(conn)
            session = self._detach(conn)
            if session is not None and ws.close_code in (1000, 1001):
                self._sessions.pop(session.session_id, None)  # a clean client close ends it
            conn.outbox.put_nowait(_STOP)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer, 5.0)
            self._gateway_signal.fire()
        return ws

    async def _write(self, conn: _Conn) -> None:
        """Send queued frames in order; a queued close happens after the frames before it."""
        closed = False
        while True:
            item = await conn.outbox.get()
            if item is _STOP:
                return
            if isinstance(item, _Close):
                if not closed:
                    closed = True
                    reason = _CLOSE_REASONS.get(item.code, "").encode()
                    with contextlib.suppress(Exception):
                        await conn.ws.close(code=item.code, message=reason)
                if not item.done.done():
                    item.done.set_result(None)
            elif isinstance(item, str) and not closed:
                try:
                    await conn.ws.send_str(item)
                except (ConnectionError, RuntimeError):
                    closed = True

    def _on_frame(self, conn: _Conn, payload: JSONDict) -> None:
        op, data = payload.get("op"), payload.get("d")
        session = conn.session
        shard = (session.shard_id, session.shard_count) if session else None
        self.frames.append(GatewayFrame(conn.id, int(op or 0), data, shard, time.monotonic()))
        if op == 1:
            self.heartbeat_count += 1
            if self.ack_heartbeats:
                conn.send({"op": 11})
        elif op == 2:
            self._identify(conn, data if isinstance(data, dict) else {})
        elif op == 6:
            self._resume(conn, data if isinstance(data, dict) else {})
        elif op == 8 and session is not None:
            self._request_members(session, data if isinstance(data, dict) else {})
        self._gateway_signal.fire()

    def _identify(self, conn: _Conn, data: JSONDict) -> None:
        self.identifies.append(data)
        shard_id, shard_count = data.get("shard") or (0, 1)
        intents = data.get("intents")
        if conn.session is not None:
            self._close_conn(conn, 4005)
        elif not self._token_valid(data.get("token")):
            self._close_conn(conn, 4004)
        elif not (isinstance(shard_count, int) and 0 <= shard_id < shard_count):
            self._close_conn(conn, 4010)
        elif not isinstance(intents, int):
            self._close_conn(conn, 4013)
        elif intents & PRIVILEGED_INTENTS & ~self.enabled_privileged_intents:
            self._close_conn(conn, 4014)
        else:
            session_id = f"fake-session-{next(self._session_ids)}"
            session = _Session(session_id, shard_id, shard_count, intents, conn=conn)
            self._sessions[session_id] = session
            conn.session = session
            guild_ids = [g for g in self._guild_ids() if shard_for(g, shard_count) == shard_id]
            session.emit("READY", self._ready(session, guild_ids))
            if intents & GUILDS_INTENT:
                for guild_id in guild_ids:
                    session.emit("GUILD_CREATE", self._guild_create(guild_id))
            self.identify_count += 1

    def _ready(self, session: _Session, guild_ids: list[int]) -> JSONDict:
        return {
            "v": 10,
            "user": self._bot_user(),
            "guilds": [{"id": str(g), "unavailable": True} for g in guild_ids],
            "session_id": session.session_id,
            "session_type": "normal",
            "resume_gateway_url": RESUME_GATEWAY_URL,
            "shard": [session.shard_id, session.shard_count],
            "application": {"id": str(APP_ID), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "user_settings": {},
        }

    def _resume(self, conn: _Conn, data: JSONDict) -> None:
        self.resumes.append(data)
        session = self._sessions.get(str(data.get("session_id")))
        seq = data.get("seq") or 0
        if not self._token_valid(data.get("token")):
            self._close_conn(conn, 4004)
        elif session is None or conn.session is not None or seq > session.seq:
            conn.send({"op": 9, "d": False})
        else:
            if session.conn is not None:  # the client came back before the old socket closed
                self._close_conn(session.conn, 4000)
            session.conn, conn.session = conn, session
            for s, frame in session.log:
                if s > seq:
                    conn.outbox.put_nowait(frame)
            session.emit("RESUMED", {})
            self.resume_count += 1

    def _request_members(self, session: _Session, data: JSONDict) -> None:
        """Op 8 (discord.py chunks guilds when the members intent is on): one empty chunk."""
        chunk: JSONDict = {
            "guild_id": str(data.get("guild_id")),
            "members": [],
            "chunk_index": 0,
            "chunk_count": 1,
        }
        if data.get("nonce"):
            chunk["nonce"] = data["nonce"]
        session.emit("GUILD_MEMBERS_CHUNK", chunk)
