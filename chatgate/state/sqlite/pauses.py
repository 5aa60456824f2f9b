"""Paused chats on SQLite: one row per chat (a human took over), few and small."""

from __future__ import annotations

import sqlite3

from chatgate.policies.takeover import Pause
from chatgate.state.sqlite.db import Database

_PUT = (
    "INSERT INTO chat_pauses(chat, since, until, paused_by) VALUES (?,?,?,?)"
    " ON CONFLICT(chat) DO UPDATE SET since = excluded.since, until = excluded.until,"
    " paused_by = excluded.paused_by"
)


def _pause(row: sqlite3.Row) -> Pause:
    return Pause(row["chat"], row["since"], row["until"], row["paused_by"])


class SqlitePauses:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def put(self, pause: Pause) -> None:
        row = (pause.chat, pause.since, pause.until, pause.by)

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(_PUT, row)

        await self._db.call(write)

    async def get(self, chat: str) -> Pause | None:
        def read(conn: sqlite3.Connection) -> Pause | None:
            row = conn.execute("SELECT * FROM chat_pauses WHERE chat = ?", (chat,)).fetchone()
            return _pause(row) if row is not None else None

        return await self._db.call(read)

    async def delete(self, chat: str, since: float | None = None) -> bool:
        def write(conn: sqlite3.Connection) -> bool:
            if since is None:
                found = conn.execute("DELETE FROM chat_pauses WHERE chat = ?", (chat,))
            else:
                found = conn.execute(
                    "DELETE FROM chat_pauses WHERE chat = ? AND since = ?", (chat, since)
                )
            return found.rowcount > 0

        return await self._db.call(write)

    async def all(self) -> list[Pause]:
        def read(conn: sqlite3.Connection) -> list[Pause]:
            rows = conn.execute("SELECT * FROM chat_pauses ORDER BY since").fetchall()
            return [_pause(row) for row in rows]

        return await self._db.call(read)
