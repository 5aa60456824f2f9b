"""Channel facts on SQLite: one row per (channel, key), expired rows swept now and then."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from chatgate.state.sqlite.db import Database

SWEEP_EVERY_S = 3600.0  # expired rows are only invisible until a sweep deletes them
_PUT = (
    "INSERT INTO channel_facts(channel, key, value, expires_at) VALUES (?,?,?,?)"
    " ON CONFLICT(channel, key) DO UPDATE SET value = excluded.value,"
    " expires_at = excluded.expires_at"
)


class SqliteFacts:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._swept_at = float("-inf")

    async def put(
        self, channel: str, key: str, value: dict[str, Any], now: float, ttl_s: float
    ) -> None:
        row = (channel, key, json.dumps(value, separators=(",", ":")), now + ttl_s)
        sweep = now - self._swept_at >= SWEEP_EVERY_S
        if sweep:
            self._swept_at = now

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(_PUT, row)
            if sweep:
                conn.execute("DELETE FROM channel_facts WHERE expires_at < ?", (now,))

        await self._db.call(write)

    async def get_many(
        self, channel: str, keys: Sequence[str], now: float
    ) -> dict[str, dict[str, Any]]:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}

        def read(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
            found: dict[str, dict[str, Any]] = {}
            for start in range(0, len(wanted), 500):  # under SQLite's bound-variable limit
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    "SELECT key, value FROM channel_facts WHERE channel = ? AND expires_at >= ?"
                    f" AND key IN ({marks})",
                    (channel, now, *part),
                ).fetchall()
                found.update((row["key"], json.loads(row["value"])) for row in rows)
            return found

        return await self._db.call(read)
