"""A person's data in the SQLite state: the journal (tombstoned on erase), transcripts and
tool approvals, the privacy audit trail, retention, and compaction.

Deleted rows leave their bytes in free pages and in the write-ahead log, so an erase ends with
`compact`: VACUUM rebuilds the file and a TRUNCATE checkpoint empties the WAL.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from chatgate.model.messages import InboundMessage
from chatgate.model.reasons import PrivacyReason
from chatgate.state.personal import (
    ERASED_STAGE,
    AuditRecord,
    Erased,
    Footprint,
    Found,
    Person,
    PersonalData,
    direct_chats,
    footprint_of,
    session_is_theirs,
    tombstone,
    with_sessions,
)
from chatgate.state.records import JournalState
from chatgate.state.sqlite.db import Database

CHUNK = 400  # bound parameters per statement (SQLite allows 32766; keeps statements small)
_COMPACT_TRIES = 20


def chunks(values: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    for value in sorted(values):
        batch.append(value)
        if len(batch) == CHUNK:
            yield batch
            batch = []
    if batch:
        yield batch


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _json(text: str | None) -> Any:
    return json.loads(text) if text else None


class _Journal:
    name = "journal"

    def __init__(self, db: Database) -> None:
        self._db = db

    async def collect(self, footprint: Footprint) -> Found:
        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            out = []
            for batch in chunks(footprint.keys):
                rows = conn.execute(
                    f"SELECT * FROM inbound WHERE key IN ({_marks(len(batch))}) ORDER BY seq",
                    batch,
                ).fetchall()
                out += [
                    {
                        "key": r["key"],
                        "received_at": r["received_at"],
                        "state": r["state"],
                        "stage": r["stage"],
                        "reason": r["reason"],
                        "session": r["session"],
                        "message": _json(r["message_json"]),
                        "reply": _json(r["reply_json"]),
                        "delivery": r["delivery"],
                    }
                    for r in rows
                ]
            return out

        return Found(self.name, tuple(await self._db.call(read)))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        def write(conn: sqlite3.Connection) -> int:
            done = 0
            for batch in chunks(footprint.keys):
                rows = conn.execute(
                    f"SELECT key, message_json FROM inbound WHERE key IN ({_marks(len(batch))})",
                    batch,
                ).fetchall()
                for row in rows:
                    done += _tombstone(conn, row["key"], row["message_json"], now)
            return done

        return Erased(self.name, tombstones=await self._db.call(write))


def _tombstone(conn: sqlite3.Connection, key: str, message_json: str, now: float) -> int:
    """Replace one entry's content with its tombstone (kept for dedupe, settled as dropped)."""
    blank = tombstone(InboundMessage.from_dict(json.loads(message_json)))
    conn.execute(
        "UPDATE inbound SET chat_id = '', sender_id = '', message_json = ?, reply_json = NULL,"
        " session = NULL, delivery_ids = NULL, state = ?, stage = ?, reason = ?, updated_at = ?"
        " WHERE key = ?",
        (
            json.dumps(blank.to_dict(), separators=(",", ":")),
            JournalState.DROPPED.value,
            ERASED_STAGE,
            PrivacyReason.ERASED.value,
            now,
            key,
        ),
    )
    return 1


class _Transcripts:
    """Whole sessions that are the person's own; their lines (and the answers to them) in
    shared ones."""

    name = "transcripts"

    def __init__(self, db: Database) -> None:
        self._db = db

    @staticmethod
    def _where(footprint: Footprint) -> Iterator[tuple[str, list[str]]]:
        for batch in chunks(footprint.own_sessions):
            yield f"session_key IN ({_marks(len(batch))})", batch
        for batch in chunks(footprint.keys):
            yield f"source IN ({_marks(len(batch))})", batch

    async def collect(self, footprint: Footprint) -> Found:
        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            seen: dict[int, dict[str, Any]] = {}
            for where, params in self._where(footprint):
                for r in conn.execute(f"SELECT * FROM messages WHERE {where}", params):
                    seen[r["id"]] = {
                        "session": r["session_key"],
                        "epoch": r["epoch"],
                        "role": r["role"],
                        "content": r["content"],
                        "name": r["name"],
                        "at": r["at"],
                        "meta": _json(r["meta"]),
                    }
            return [seen[i] for i in sorted(seen)]

        return Found(self.name, tuple(await self._db.call(read)))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        def write(conn: sqlite3.Connection) -> int:
            removed = 0
            for where, params in self._where(footprint):
                removed += conn.execute(f"DELETE FROM messages WHERE {where}", params).rowcount
            for batch in chunks(footprint.own_sessions):
                conn.execute(f"DELETE FROM sessions WHERE key IN ({_marks(len(batch))})", batch)
            for batch in chunks(footprint.sessions - footprint.own_sessions):
                _recount(conn, batch)
            return removed

        return Erased(self.name, removed=await self._db.call(write))


def _recount(conn: sqlite3.Connection, sessions: Sequence[str]) -> None:
    conn.execute(
        "UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages m"
        " WHERE m.session_key = sessions.key AND m.epoch = sessions.epoch)"
        f" WHERE key IN ({_marks(len(sessions))})",
        list(sessions),
    )


class _Approvals:
    """Tool approval prompts their turns asked (the masked arguments may quote them)."""

    name = "approvals"

    def __init__(self, db: Database) -> None:
        self._db = db

    async def collect(self, footprint: Footprint) -> Found:
        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            out = []
            for batch in chunks(footprint.keys):
                for r in conn.execute(
                    f"SELECT * FROM approvals WHERE key IN ({_marks(len(batch))})", batch
                ):
                    out.append(
                        {
                            "id": r["id"],
                            "key": r["key"],
                            "state": r["state"],
                            "decided_by": r["decided_by"],
                            "created_at": r["created_at"],
                            "data": _json(r["data"]),
                        }
                    )
            return out

        return Found(self.name, tuple(await self._db.call(read)))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        def write(conn: sqlite3.Connection) -> int:
            removed = 0
            for batch in chunks(footprint.keys):
                removed += conn.execute(
                    f"DELETE FROM approvals WHERE key IN ({_marks(len(batch))})", batch
                ).rowcount
            return removed

        return Erased(self.name, removed=await self._db.call(write))


class SqlitePersonal:
    """`PersonalStores` over the state database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def footprint(self, person: Person) -> Footprint:
        def read(conn: sqlite3.Connection) -> list[tuple[str, InboundMessage, str | None]]:
            rows = conn.execute(
                "SELECT key, message_json, session FROM inbound"
                " WHERE channel = ? AND sender_id = ? ORDER BY seq",
                (person.channel, person.user),
            ).fetchall()
            return [
                (r["key"], InboundMessage.from_dict(json.loads(r["message_json"])), r["session"])
                for r in rows
            ]

        journal = footprint_of(person, await self._db.call(read))

        def sessions(conn: sqlite3.Connection) -> tuple[str | None, list[str]]:
            paired = conn.execute(
                "SELECT chat_id FROM pairing_approved WHERE channel = ? AND sender_id = ?",
                (person.channel, person.user),
            ).fetchone()
            keys = conn.execute(
                "SELECT key FROM sessions WHERE key LIKE ? ESCAPE '\\'",
                (f"%:{_like(person.channel)}:%",),
            ).fetchall()
            return (paired["chat_id"] if paired else None), [r["key"] for r in keys]

        paired, keys = await self._db.call(sessions)
        chats = direct_chats(person, journal, paired)
        own = frozenset(k for k in keys if session_is_theirs(k, person, chats))
        return with_sessions(journal, chats, own)

    def parts(self) -> Sequence[PersonalData]:
        return (_Journal(self._db), _Transcripts(self._db), _Approvals(self._db))

    async def audit(self, record: AuditRecord) -> None:
        data = json.dumps(record.to_json(), separators=(",", ":"))
        await self._db.call(
            lambda conn: conn.execute(
                "INSERT INTO privacy_audit(at, data) VALUES (?, ?)", (record.at, data)
            )
        )

    async def audit_log(self, limit: int) -> list[AuditRecord]:
        def read(conn: sqlite3.Connection) -> list[AuditRecord]:
            rows = conn.execute(
                "SELECT data FROM privacy_audit ORDER BY id DESC LIMIT ?", (limit,)
            ).fetchall()
            return [AuditRecord.from_json(json.loads(r["data"])) for r in rows]

        return await self._db.call(read)

    async def expire(self, channel: str, older_than: float, batch: int) -> int:
        def write(conn: sqlite3.Connection) -> int:
            pattern = f"%:{_like(channel)}:%"
            old = conn.execute(
                "SELECT id, session_key FROM messages WHERE at < ? AND session_key LIKE ?"
                " ESCAPE '\\' LIMIT ?",
                (older_than, pattern, batch),
            ).fetchall()
            conn.executemany("DELETE FROM messages WHERE id = ?", [(r["id"],) for r in old])
            for sessions in chunks({r["session_key"] for r in old}):
                _recount(conn, sessions)
            done = len(old)
            rows = conn.execute(
                "SELECT key, message_json FROM inbound WHERE channel = ? AND received_at < ?"
                " AND state IN ('done', 'dropped') AND sender_id != '' ORDER BY seq LIMIT ?",
                (channel, older_than, max(0, batch - done)),
            ).fetchall()
            for row in rows:
                done += _tombstone(conn, row["key"], row["message_json"], older_than)
            return done

        return await self._db.call(write)

    async def compact(self) -> None:
        """VACUUM on the writer thread (turns wait behind it rather than fail on a lock), then
        fold the WAL in and truncate it."""
        await self._db.maintain(_vacuum)


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _vacuum(conn: sqlite3.Connection) -> None:
    """Rebuild the file without the freed pages, then fold the WAL in and empty it."""
    conn.execute("VACUUM")
    for _ in range(_COMPACT_TRIES):
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy:
            return
