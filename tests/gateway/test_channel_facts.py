"""Channel facts on SQLite: latest value wins, expiry hides and later sweeps rows, many at once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from chatgate.state.sqlite.db import Database
from chatgate.state.sqlite.facts import SWEEP_EVERY_S, SqliteFacts

NOW = 1_800_000_000.0


async def test_facts_expire_and_are_swept(tmp_path: Path) -> None:
    db = Database(tmp_path / "facts.db")
    await db.open()
    try:
        facts = SqliteFacts(db)
        await facts.put("wa", "window:1", {"at": 1.0}, NOW, 60.0)
        await facts.put("wa", "window:1", {"at": 2.0}, NOW, 60.0)
        await facts.put("wa", "window:2", {"at": 3.0}, NOW, 10.0)
        await facts.put("other", "window:1", {"at": 4.0}, NOW, 60.0)
        keys = ["window:1", "window:2", "window:3", *(f"k{i}" for i in range(1200))]
        assert await facts.get_many("wa", keys, NOW + 5) == {
            "window:1": {"at": 2.0},
            "window:2": {"at": 3.0},
        }
        assert await facts.get_many("wa", keys, NOW + 30) == {"window:1": {"at": 2.0}}
        assert await facts.get_many("wa", [], NOW) == {}
        await facts.put("wa", "late", {}, NOW + SWEEP_EVERY_S, 60.0)  # sweeps the expired rows

        def count(conn: sqlite3.Connection) -> int:
            return int(conn.execute("SELECT COUNT(*) FROM channel_facts").fetchone()[0])

        assert await db.call(count) == 1
    finally:
        await db.close()
