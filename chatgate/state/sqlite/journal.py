"""The journal on SQLite: one row per inbound message, dedupe by its key.

Rows still pending/answered at start-up are resumed, which is what makes a crash between
journal and reply answer exactly once. The final DONE mark is queued behind the writer (nothing
waits for it; a later call on the same database still sees it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Sequence
from typing import Any

from chatgate.model.compact import compact_json
from chatgate.model.messages import InboundMessage
from chatgate.state.protocols import TranscriptAppend
from chatgate.state.records import JournalEntry, JournalMark, JournalState
from chatgate.state.sqlite.db import Database
from chatgate.state.sqlite.sessions import appender

_INSERT = (
    "INSERT INTO inbound(key, channel, chat_id, sender_id, message_id, received_at, state,"
    " message_json, updated_at) VALUES (?,?,?,?,?,?,'pending',?,?)"
)


def _entry(row: sqlite3.Row) -> JournalEntry:
    return JournalEntry(
        key=row["key"],
        state=JournalState(row["state"]),
        message=InboundMessage.from_dict(json.loads(row["message_json"])),
        stage=row["stage"],
        reason=row["reason"],
        session=row["session"],
        reply=json.loads(row["reply_json"]) if row["reply_json"] else None,
        delivery=row["delivery"],
        delivery_ids=json.loads(row["delivery_ids"]) if row["delivery_ids"] else [],
        received_at=row["received_at"],
        updated_at=row["updated_at"],
    )


class SqliteJournal:
    indexes_sessions = False  # one process: its session queues keep the order

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(
        self, msg: InboundMessage, now: float, window_s: float, session: str = ""
    ) -> tuple[bool, JournalEntry | None]:
        """Append ``msg``; (False, existing) when it is a duplicate within the dedupe window."""
        payload = msg.to_json()

        row = (msg.key, msg.channel, msg.chat_id, msg.sender_id, msg.message_id, now, payload, now)

        def write(conn: sqlite3.Connection) -> tuple[bool, JournalEntry | None]:
            if conn.execute(_INSERT + " ON CONFLICT(key) DO NOTHING", row).rowcount:
                return True, None
            existing = conn.execute("SELECT * FROM inbound WHERE key = ?", (msg.key,)).fetchone()
            if existing is not None and existing["received_at"] >= now - window_s:
                return False, _entry(existing)
            conn.execute("DELETE FROM inbound WHERE key = ?", (msg.key,))  # outside the window: new
            conn.execute(_INSERT, row)
            return True, None

        return await self._db.call(write)

    async def settle(self, key: str, mark: JournalMark) -> None:
        await self._db.call(_update(key, mark))

    def turn_writer(self) -> SqliteJournal:
        return self  # the session store shares this database

    async def settle_turn(
        self, keys: Sequence[str], mark: JournalMark, transcript: TranscriptAppend | None
    ) -> BaseException | None:
        """The turn's journal marks and transcript lines in one writer call, so one commit."""
        first = _update(keys[0], mark)
        others = [(*first.params[:-1], k) for k in keys[1:]]
        append = (
            appender(transcript.key, transcript.epoch, transcript.messages, mark.now)
            if transcript is not None and transcript.messages
            else None
        )

        def write(conn: sqlite3.Connection) -> BaseException | None:
            first(conn)
            if others:
                conn.executemany(_UPDATE, others)
            if append is None:
                return None
            conn.execute("SAVEPOINT transcript")
            try:
                append(conn)
            except sqlite3.Error as exc:
                if not conn.in_transaction:
                    raise  # SQLite rolled the whole transaction back: nothing was written
                conn.execute("ROLLBACK TO transcript")
                conn.execute("RELEASE transcript")
                return exc
            conn.execute("RELEASE transcript")
            return None

        return await self._db.call(write)

    async def finish(
        self,
        key: str,
        now: float,
        *,
        stage: str,
        reason: str,
        delivery: str,
        delivery_ids: list[str],
    ) -> None:
        mark = JournalMark(
            JournalState.DONE,
            now,
            stage=stage,
            reason=reason,
            delivery=delivery,
            delivery_ids=delivery_ids,
        )
        self._db.submit(_update(key, mark))

    async def find(
        self,
        channel: str,
        *,
        message_id: str | None = None,
        sender_id: str | None = None,
        limit: int = 10,
    ) -> list[JournalEntry]:
        def read(conn: sqlite3.Connection) -> list[JournalEntry]:
            if message_id is not None:
                rows = conn.execute(
                    "SELECT * FROM inbound WHERE channel = ? AND (message_id = ? OR key = ?)",
                    (channel, message_id, message_id),
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT * FROM inbound WHERE channel = ? AND sender_id = ?"
                    " ORDER BY seq DESC LIMIT ?",
                    (channel, sender_id, limit),
                ).fetchall()
            return [_entry(r) for r in rows]

        return await self._db.call(read)

    async def unfinished(self) -> list[JournalEntry]:
        """Entries a previous process accepted but did not finish, oldest first."""

        def read(conn: sqlite3.Connection) -> list[JournalEntry]:
            rows = conn.execute(
                "SELECT * FROM inbound WHERE state IN ('pending', 'answered') ORDER BY seq"
            ).fetchall()
            return [_entry(r) for r in rows]

        return await self._db.call(read)

    async def orphaned(self, channels: Collection[str]) -> list[JournalEntry]:
        return []  # one daemon per state dir: nobody else leaves work here while it runs

    async def hand_off(self, key: str) -> bool:
        return False  # nobody else could deliver it

    async def watch_hand_offs(self, wake: Callable[[], None]) -> None:
        return None  # nobody else hands anything over

    async def unclaimed(self, keys: Collection[str]) -> set[str]:
        return set()  # nothing is ever handed off here

    async def restore(self, msg: InboundMessage, now: float, session: str = "") -> bool:
        new, _ = await self.record(msg, now, now)  # nobody else takes messages in here
        return new

    async def generation(self) -> str:
        return "local"  # the file's data is lost only with the process's own state dir

    async def owns(self, key: str) -> bool:
        return True  # one daemon per state dir: every entry is its own

    async def claim_send(self, key: str) -> bool:
        return True

    async def get(self, key: str) -> JournalEntry | None:
        def read(conn: sqlite3.Connection) -> JournalEntry | None:
            row = conn.execute("SELECT * FROM inbound WHERE key = ?", (key,)).fetchone()
            return _entry(row) if row else None

        return await self._db.call(read)

    async def purge(self, older_than: float) -> int:
        """Drop settled rows older than the dedupe window (oldest first, so no index is needed)."""

        def write(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT seq FROM inbound WHERE received_at >= ? ORDER BY seq LIMIT 1", (older_than,)
            ).fetchone()
            bound = (
                row["seq"]
                if row
                else (conn.execute("SELECT MAX(seq) FROM inbound").fetchone()[0] or 0) + 1
            )
            cur = conn.execute(
                "DELETE FROM inbound WHERE seq < ? AND state IN ('done', 'dropped')", (bound,)
            )
            return cur.rowcount

        return await self._db.call(write)


_UPDATE = (
    "UPDATE inbound SET state = ?, updated_at = ?,"
    " stage = COALESCE(?, stage), reason = COALESCE(?, reason),"
    " session = COALESCE(?, session), reply_json = COALESCE(?, reply_json),"
    " delivery = COALESCE(?, delivery), delivery_ids = COALESCE(?, delivery_ids)"
    " WHERE key = ?"
)


class _Update:
    """One journal mark as a writer-thread call; ``params`` (the key last) serve sibling keys."""

    __slots__ = ("params",)

    def __init__(self, params: tuple[Any, ...]) -> None:
        self.params = params

    def __call__(self, conn: sqlite3.Connection) -> None:
        conn.execute(_UPDATE, self.params)


def _update(key: str, m: JournalMark) -> _Update:
    reply_json = compact_json(m.reply) if m.reply is not None else None
    ids = m.delivery_ids
    ids_json = None if ids is None else compact_json(list(ids)) if ids else "[]"
    params = (m.state.value, m.now, m.stage, m.reason, m.session, reply_json, m.delivery, ids_json)
    return _Update((*params, key))
