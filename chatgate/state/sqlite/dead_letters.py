"""Dead letters and dead targets on SQLite.

This process is the only writer (one daemon per state dir; the CLI goes through its API), so the
DLQ size and the dead-target set are kept in memory and read without a database hop.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from chatgate.model.messages import Target
from chatgate.model.reasons import SendErrorKind
from chatgate.state.records import DeadLetter
from chatgate.state.sqlite.db import Database


def _letter(row: sqlite3.Row) -> DeadLetter:
    return DeadLetter(
        id=row["id"],
        created_at=row["created_at"],
        target=Target.from_dict(json.loads(row["target_json"])),
        message=json.loads(row["message_json"]),
        kind=row["kind"],
        error=row["error"],
        attempts=row["attempts"],
        inbound_key=row["inbound_key"],
        session=row["session"],
    )


class SqliteDeadLetters:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._size = 0

    async def load(self) -> None:
        self._size = await self._db.call(
            lambda c: int(c.execute("SELECT COUNT(*) FROM dlq").fetchone()[0])
        )

    async def count(self) -> int:
        return self._size

    async def add(
        self,
        target: Target,
        message: dict[str, Any],
        kind: SendErrorKind | str,
        error: str,
        attempts: int,
        now: float,
        *,
        inbound_key: str | None = None,
        session: str | None = None,
    ) -> int:
        row = (
            now,
            target.channel,
            json.dumps(target.to_dict()),
            json.dumps(message, separators=(",", ":")),
            str(kind),
            error[:500],
            attempts,
            inbound_key,
            session,
        )

        def write(conn: sqlite3.Connection) -> int:
            cur = conn.execute(
                "INSERT INTO dlq(created_at, channel, target_json, message_json, kind, error, attempts,"
                " inbound_key, session) VALUES (?,?,?,?,?,?,?,?,?)",
                row,
            )
            return int(cur.lastrowid or 0)

        entry_id = await self._db.call(write)
        self._size += 1
        return entry_id

    async def list(self, limit: int = 100) -> list[DeadLetter]:
        def read(conn: sqlite3.Connection) -> list[DeadLetter]:
            rows = conn.execute("SELECT * FROM dlq ORDER BY id LIMIT ?", (limit,)).fetchall()
            return [_letter(r) for r in rows]

        return await self._db.call(read)

    async def get(self, entry_id: int) -> DeadLetter | None:
        row = await self._db.call(
            lambda c: c.execute("SELECT * FROM dlq WHERE id = ?", (entry_id,)).fetchone()
        )
        return _letter(row) if row is not None else None

    async def take(self, entry_id: int) -> DeadLetter | None:
        """Remove and return one entry (for replay; a failed replay re-enters the DLQ)."""

        def write(conn: sqlite3.Connection) -> DeadLetter | None:
            row = conn.execute("SELECT * FROM dlq WHERE id = ?", (entry_id,)).fetchone()
            if row is None:
                return None
            conn.execute("DELETE FROM dlq WHERE id = ?", (entry_id,))
            return _letter(row)

        entry = await self._db.call(write)
        if entry is not None:
            self._size = max(0, self._size - 1)
        return entry

    async def drop(self, entry_id: int) -> bool:
        removed = await self._db.call(
            lambda c: c.execute("DELETE FROM dlq WHERE id = ?", (entry_id,)).rowcount
        )
        if removed:
            self._size = max(0, self._size - 1)
        return bool(removed)


class SqliteDeadTargets:
    """A target comes back to life when its chat writes to us again (the user unblocked the bot)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._dead: dict[str, str] = {}

    async def load(self) -> None:
        rows = await self._db.call(
            lambda c: c.execute("SELECT address, kind FROM dead_targets").fetchall()
        )
        self._dead = {r["address"]: r["kind"] for r in rows}

    async def kind(self, target: Target) -> str | None:
        return self._dead.get(target.address)

    async def all(self) -> dict[str, str]:
        return dict(self._dead)

    async def mark(self, target: Target, kind: SendErrorKind, error: str, now: float) -> None:
        self._dead[target.address] = kind.value

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO dead_targets(address, kind, error, first_at, last_at) VALUES (?,?,?,?,?)"
                " ON CONFLICT(address) DO UPDATE SET kind = excluded.kind, error = excluded.error,"
                " last_at = excluded.last_at, count = count + 1",
                (target.address, kind.value, error[:300], now, now),
            )

        await self._db.call(write)

    async def revive(self, address: str) -> bool:
        if address not in self._dead:
            return False
        del self._dead[address]
        await self._db.call(
            lambda c: c.execute("DELETE FROM dead_targets WHERE address = ?", (address,))
        )
        return True
