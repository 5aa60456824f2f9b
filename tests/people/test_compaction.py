"""`Database.maintain`: a VACUUM queued among ordinary writes runs outside any transaction, on the
writer thread, in order; the writes around it all land (none fails on a lock)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from chatgate.state.sqlite.db import Database


async def test_maintenance_runs_between_writes_outside_a_transaction(tmp_path: Path) -> None:
    db = Database(tmp_path / "state.db")
    await db.open()
    try:

        def write(n: int) -> object:
            return lambda conn: conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?)", (f"k{n}", "v")
            )

        def vacuum(conn: sqlite3.Connection) -> bool:
            in_transaction = conn.in_transaction
            conn.execute("VACUUM")  # raises inside a transaction
            return in_transaction

        results = await asyncio.gather(
            db.call(write(1)), db.maintain(vacuum), db.call(write(2)), db.maintain(vacuum)
        )
        assert results[1] is False and results[3] is False
        rows = await db.call(
            lambda conn: conn.execute("SELECT key FROM meta WHERE key LIKE 'k%'").fetchall()
        )
        assert sorted(r["key"] for r in rows) == ["k1", "k2"]
        assert await db.call(lambda conn: conn.in_transaction) is True  # ordinary calls: in one
    finally:
        await db.close()
