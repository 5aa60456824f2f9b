"""The config-change audit trail on SQLite (see chatgate.state.config_audit)."""

from __future__ import annotations

import json
import sqlite3

from chatgate.state.config_audit import KEEP, ConfigChange
from chatgate.state.sqlite.db import Database


class SqliteConfigAudit:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(self, change: ConfigChange) -> int:
        data = json.dumps(change.to_json(), separators=(",", ":"))

        def write(conn: sqlite3.Connection) -> int:
            cursor = conn.execute(
                "INSERT INTO config_audit(at, data) VALUES (?, ?)", (change.at, data)
            )
            ident = int(cursor.lastrowid or 0)
            conn.execute("DELETE FROM config_audit WHERE id <= ?", (ident - KEEP,))
            return ident

        return await self._db.call(write)

    async def recent(self, limit: int = 20) -> list[ConfigChange]:
        def read(conn: sqlite3.Connection) -> list[ConfigChange]:
            rows = conn.execute(
                "SELECT id, data FROM config_audit ORDER BY id DESC LIMIT ?", (limit,)
            ).fetchall()
            return [ConfigChange.from_json(json.loads(r["data"]), int(r["id"])) for r in rows]

        return await self._db.call(read)
