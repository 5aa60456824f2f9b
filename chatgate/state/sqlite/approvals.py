"""Pending tool approvals on SQLite (see chatgate.state.approvals)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from chatgate.policies.approvals import ApprovalState
from chatgate.state.approvals import KEEP_S, ApprovalRecord
from chatgate.state.sqlite.db import Database

_COLUMNS = "id, state, decided_by, decided_at, prompt_ids, data"


def _record(row: sqlite3.Row) -> ApprovalRecord:
    return ApprovalRecord.from_static(
        str(row["id"]),
        json.loads(row["data"]),
        str(row["state"]),
        str(row["decided_by"] or ""),
        row["decided_at"],
        json.loads(row["prompt_ids"] or "[]"),
    )


class SqliteApprovals:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(self, record: ApprovalRecord) -> ApprovalRecord:
        channel, chat, _ = record.prompt
        row = (
            record.id,
            record.key,
            channel,
            chat,
            record.state.value,
            record.expires_at,
            record.created_at,
            json.dumps(record.static(), ensure_ascii=False, default=str),
        )

        def write(conn: sqlite3.Connection) -> ApprovalRecord:
            conn.execute(
                "DELETE FROM approvals WHERE expires_at < ?", (record.created_at - KEEP_S,)
            )
            conn.execute(
                "INSERT OR IGNORE INTO approvals(id, key, prompt_channel, prompt_chat, state,"
                " expires_at, created_at, data) VALUES (?,?,?,?,?,?,?,?)",
                row,
            )
            found = conn.execute(
                f"SELECT {_COLUMNS} FROM approvals WHERE id = ?", (record.id,)
            ).fetchone()
            return _record(found)

        return await self._db.call(write)

    async def get(self, ident: str) -> ApprovalRecord | None:
        def read(conn: sqlite3.Connection) -> ApprovalRecord | None:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM approvals WHERE id = ?", (ident,)
            ).fetchone()
            return _record(row) if row else None

        return await self._db.call(read)

    async def set_prompt(self, ident: str, message_ids: Sequence[str]) -> None:
        ids = json.dumps(list(message_ids))
        await self._db.call(
            lambda c: c.execute("UPDATE approvals SET prompt_ids = ? WHERE id = ?", (ids, ident))
        )

    async def decide(
        self, ident: str, state: ApprovalState, by: str, now: float
    ) -> tuple[ApprovalRecord | None, bool]:
        def write(conn: sqlite3.Connection) -> tuple[ApprovalRecord | None, bool]:
            changed = conn.execute(
                "UPDATE approvals SET state = ?, decided_by = ?, decided_at = ?"
                " WHERE id = ? AND state = ?",
                (state.value, by, now, ident, ApprovalState.PENDING.value),
            ).rowcount
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM approvals WHERE id = ?", (ident,)
            ).fetchone()
            return (_record(row) if row else None), changed == 1

        return await self._db.call(write)

    async def pending_in(self, channel: str, chat_id: str, now: float) -> list[ApprovalRecord]:
        def read(conn: sqlite3.Connection) -> list[ApprovalRecord]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM approvals WHERE prompt_channel = ? AND prompt_chat = ?"
                " AND state = ? AND expires_at > ? ORDER BY created_at DESC",
                (channel, chat_id, ApprovalState.PENDING.value, now),
            ).fetchall()
            return [_record(r) for r in rows]

        return await self._db.call(read)

    async def for_message(self, key: str) -> list[ApprovalRecord]:
        def read(conn: sqlite3.Connection) -> list[ApprovalRecord]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM approvals WHERE key = ? ORDER BY created_at", (key,)
            ).fetchall()
            return [_record(r) for r in rows]

        return await self._db.call(read)
