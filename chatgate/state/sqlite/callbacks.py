"""Long button payloads on SQLite (see chatgate.state.callback_cache)."""

from __future__ import annotations

import sqlite3
import time

from chatgate.state.callback_cache import WriteBehindCallbacks
from chatgate.state.sqlite.db import Database


class SqliteCallbacks(WriteBehindCallbacks):
    def __init__(self, db: Database) -> None:
        super().__init__()
        self._db = db

    async def _persist(self, ref: str, value: str) -> None:
        await self._db.call(
            lambda c: c.execute(
                "INSERT OR IGNORE INTO callbacks(ref, value, created_at) VALUES (?,?,?)",
                (ref, value, time.time()),
            )
        )

    async def _load(self, ref: str) -> str | None:
        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT value FROM callbacks WHERE ref = ?", (ref,)).fetchone()
            return str(row["value"]) if row else None

        return await self._db.call(read)
