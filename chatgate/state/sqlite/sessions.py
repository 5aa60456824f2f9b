"""Session transcripts on SQLite.

Appends are idempotent per (session, epoch, source, role), so re-running persistence for a message
after a crash never duplicates a transcript entry. `/new` bumps the epoch instead of deleting, which
keeps old conversations for audit while giving the agent a fresh transcript.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence

from chatgate.model.chat import ChatMessage
from chatgate.state.records import SessionInfo, StoredSession, TranscriptLine
from chatgate.state.sqlite.db import Database

# One encoder: json.dumps with an option builds a new JSONEncoder per call (per transcript line).
_META = json.JSONEncoder(ensure_ascii=False)
_INSERT_MESSAGE = (
    "INSERT OR IGNORE INTO messages(session_key, epoch, role, content, name, source, at, meta)"
    " VALUES (?,?,?,?,?,?,?,?)"
)
# Inserted rows are counted by the statement before (an ignored duplicate is not a new message).
_UPSERT_SESSION = (
    "INSERT INTO sessions(key, epoch, created_at, updated_at, message_count) VALUES (?,?,?,?,?)"
    " ON CONFLICT(key) DO UPDATE SET updated_at = excluded.updated_at,"
    " message_count = message_count + excluded.message_count"
)


class SqliteSessionStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def load(self, key: str, limit: int) -> StoredSession:
        def read(conn: sqlite3.Connection) -> StoredSession:
            row = conn.execute("SELECT epoch FROM sessions WHERE key = ?", (key,)).fetchone()
            epoch = row["epoch"] if row else 0
            rows = conn.execute(
                "SELECT role, content, name, source, meta FROM messages"
                " WHERE session_key = ? AND epoch = ? ORDER BY id DESC LIMIT ?",
                (key, epoch, limit),
            ).fetchall()
            messages = [
                ChatMessage(
                    r["role"],
                    r["content"],
                    r["name"],
                    r["source"],
                    json.loads(r["meta"]) if r["meta"] else None,
                )
                for r in reversed(rows)
            ]
            return StoredSession(key, epoch, messages)

        return await self._db.call(read)

    async def append(
        self, key: str, epoch: int, messages: Sequence[ChatMessage], now: float
    ) -> None:
        write = appender(key, epoch, messages, now)
        await self._db.call(write)

    async def reset(self, key: str, now: float) -> int:
        def write(conn: sqlite3.Connection) -> int:
            conn.execute(
                "INSERT INTO sessions(key, epoch, created_at, updated_at) VALUES (?,1,?,?)"
                " ON CONFLICT(key) DO UPDATE SET epoch = epoch + 1, updated_at = excluded.updated_at,"
                " message_count = 0",
                (key, now, now),
            )
            row = conn.execute("SELECT epoch FROM sessions WHERE key = ?", (key,)).fetchone()
            return int(row["epoch"])

        return await self._db.call(write)

    async def recent(self, limit: int = 100) -> list[SessionInfo]:
        def read(conn: sqlite3.Connection) -> list[SessionInfo]:
            rows = conn.execute(
                "SELECT key, epoch, message_count, updated_at FROM sessions"
                " ORDER BY updated_at DESC LIMIT ?",
                (limit,),
            ).fetchall()
            return [
                SessionInfo(r["key"], r["epoch"], r["message_count"], r["updated_at"]) for r in rows
            ]

        return await self._db.call(read)

    async def transcript(self, key: str) -> list[TranscriptLine] | None:
        def read(conn: sqlite3.Connection) -> list[TranscriptLine] | None:
            row = conn.execute("SELECT epoch FROM sessions WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            rows = conn.execute(
                "SELECT role, content, name, at, meta, source FROM messages"
                " WHERE session_key = ? AND epoch = ? ORDER BY id",
                (key, row["epoch"]),
            ).fetchall()
            return [
                TranscriptLine(
                    r["role"], r["content"], r["name"], r["at"], human_of(r["meta"]), r["source"]
                )
                for r in rows
            ]

        return await self._db.call(read)

    async def revision(self, key: str) -> int | None:
        return None  # one daemon per state dir: the warm copy is always current

    async def flush(self) -> None:
        await self._db.call(lambda conn: None)  # every earlier write commits first


def appender(
    key: str, epoch: int, messages: Sequence[ChatMessage], now: float
) -> Callable[[sqlite3.Connection], None]:
    """The transcript append as a writer-thread call (the turn's journal write reuses it)."""
    rows = [
        (
            key,
            epoch,
            m.role,
            m.content,
            m.name,
            m.source,
            now,
            _META.encode(m.meta) if m.meta else None,
        )
        for m in messages
    ]

    def write(conn: sqlite3.Connection) -> None:
        cur = conn.executemany(_INSERT_MESSAGE, rows)
        conn.execute(_UPSERT_SESSION, (key, epoch, now, now, cur.rowcount))

    return write


def human_of(meta: str | None) -> str | None:
    """Who wrote a line an operator sent as the bot (`meta.human`), from its stored meta."""
    if not meta or '"human"' not in meta:
        return None
    found = json.loads(meta).get("human")
    return str(found) if found else None
