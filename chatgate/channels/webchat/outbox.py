"""The durable per-browser message log that makes reconnects lossless and duplicate-free.

Every message a browser session shows (its own messages, answers, drafts being streamed, notices)
is a row keyed by (session, message id) with a display position and a sequence number that grows
with every change; an edit rewrites the row under a new sequence number. A browser that
reconnects names the last sequence number it saw and gets every row changed since, so a reply
produced while it was away (even across a daemon restart) arrives exactly once, in its final form.
SQLite on one thread of its own (WAL); rows per session are bounded and expire with the cookie.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
PRUNE_EVERY = 20
_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
  sid TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, pos INTEGER NOT NULL,
  role TEXT NOT NULL, body TEXT NOT NULL, at REAL NOT NULL,
  PRIMARY KEY (sid, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS messages_by_seq ON messages (sid, seq);
CREATE TABLE IF NOT EXISTS cursors (
  sid TEXT PRIMARY KEY, seq INTEGER NOT NULL, at REAL NOT NULL
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class Entry:
    """One message as a browser shows it; ``seq`` orders changes, ``pos`` orders the display."""

    sid: str
    id: str
    seq: int
    pos: int
    role: str
    body: dict[str, Any]
    at: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "seq": self.seq, "pos": self.pos, "role": self.role,
                "at": self.at, **self.body}  # fmt: skip


Publish = Callable[[Entry], None]
Typing = Callable[[str, float], None]


class MessageLog(Protocol):
    """An outbox: this SQLite one (one daemon) or a shared one (replicas on Redis)."""

    async def open(self, now: float) -> None: ...
    async def close(self) -> None: ...
    async def put(
        self,
        sid: str,
        role: str,
        body: dict[str, Any],
        now: float,
        *,
        message_id: str | None = None,
    ) -> Entry: ...
    async def since(self, sid: str, after: int) -> list[Entry]: ...
    async def typing(self, sid: str, ttl_s: float) -> None:
        """Show the typing indicator on every stream of ``sid``, wherever it is served."""

    async def forget(self, sid: str) -> int:
        """Remove every message of ``sid`` for good (a privacy erase); how many there were."""
        ...


class SharedWebChat(Protocol):
    """A store every replica sees (``ctx.kv["webchat"]``): the cookie key and the outboxes."""

    async def install_key(self) -> bytes: ...
    def outbox(
        self,
        channel: str,
        *,
        keep: int,
        max_age_s: float,
        publish: Publish,
        typing: Typing,
        resync: Callable[[], None],
    ) -> MessageLog:
        """``resync`` closes every open stream after a gap in the relay (browsers replay)."""


class Outbox:
    def __init__(
        self,
        path: Path,
        *,
        keep: int,
        max_age_s: float,
        publish: Publish,
        typing: Typing | None = None,
    ) -> None:
        self.path = path
        self.keep = keep
        self.max_age_s = max_age_s
        self._publish = publish
        self._typing = typing or (lambda sid, ttl_s: None)
        self._conn: sqlite3.Connection | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def open(self, now: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="chatgate-webchat")
        await self._run(lambda: self._open(now))

    def _open(self, now: float) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(_SCHEMA)
        horizon = now - self.max_age_s
        with conn:
            conn.execute("DELETE FROM messages WHERE at < ?", (horizon,))
            conn.execute("DELETE FROM cursors WHERE at < ?", (horizon,))
        self._conn = conn

    async def close(self) -> None:
        if self._executor is None:
            return
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._run(conn.close)
        self._executor.shutdown(wait=True)
        self._executor = None

    async def _run(self, fn: Callable[[], T]) -> T:
        if self._executor is None or self._loop is None:
            raise RuntimeError("the web chat outbox is closed")
        return await self._loop.run_in_executor(self._executor, fn)

    async def put(
        self,
        sid: str,
        role: str,
        body: dict[str, Any],
        now: float,
        *,
        message_id: str | None = None,
    ) -> Entry:
        """Add a message (``message_id`` None: a new one, named after its sequence number) or
        rewrite an existing one in place; returns once it is durable and published."""
        encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        return await self._run(lambda: self._put(sid, role, encoded, body, now, message_id))

    def _put(
        self, sid: str, role: str, encoded: str, body: dict[str, Any], now: float, mid: str | None
    ) -> Entry:
        conn = self._connection()
        with conn:
            row = conn.execute("SELECT seq FROM cursors WHERE sid = ?", (sid,)).fetchone()
            seq = (row[0] if row else 0) + 1
            conn.execute(
                "INSERT INTO cursors (sid, seq, at) VALUES (?, ?, ?) "
                "ON CONFLICT (sid) DO UPDATE SET seq = excluded.seq, at = excluded.at",
                (sid, seq, now),
            )
            message_id = mid or f"m{seq}"
            found = conn.execute(
                "SELECT pos FROM messages WHERE sid = ? AND id = ?", (sid, message_id)
            ).fetchone()
            pos = found[0] if found else seq
            conn.execute(
                "INSERT OR REPLACE INTO messages (sid, id, seq, pos, role, body, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (sid, message_id, seq, pos, role, encoded, now),
            )
            if seq % PRUNE_EVERY == 0:
                conn.execute(
                    "DELETE FROM messages WHERE sid = ? AND pos < (SELECT MIN(pos) FROM "
                    "(SELECT pos FROM messages WHERE sid = ? ORDER BY pos DESC LIMIT ?))",
                    (sid, sid, self.keep),
                )
        entry = Entry(sid, message_id, seq, pos, role, body, now)
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._publish, entry)  # in commit order
        return entry

    async def typing(self, sid: str, ttl_s: float) -> None:
        self._typing(sid, ttl_s)

    async def since(self, sid: str, after: int) -> list[Entry]:
        """Every message of ``sid`` changed after sequence number ``after``, in change order."""
        return await self._run(lambda: self._since(sid, after))

    def _since(self, sid: str, after: int) -> list[Entry]:
        rows = self._connection().execute(
            "SELECT id, seq, pos, role, body, at FROM messages WHERE sid = ? AND seq > ? "
            "ORDER BY seq",
            (sid, after),
        )
        return [
            Entry(sid, i, seq, pos, role, json.loads(b), at) for i, seq, pos, role, b, at in rows
        ]

    async def forget(self, sid: str) -> int:
        """Delete the browser session's messages and cursor, then VACUUM and empty the WAL so
        their bytes leave the file."""
        return await self._run(lambda: self._forget(sid))

    def _forget(self, sid: str) -> int:
        conn = self._connection()
        with conn:
            removed = conn.execute("DELETE FROM messages WHERE sid = ?", (sid,)).rowcount
            conn.execute("DELETE FROM cursors WHERE sid = ?", (sid,))
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(removed)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("the web chat outbox is closed")
        return self._conn
