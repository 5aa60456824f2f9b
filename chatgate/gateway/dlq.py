"""Dead-letter queue for replies that could not be delivered, and the dead-target registry."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from chatgate.channels.types import Target
from chatgate.gateway.db import Database
from chatgate.policies.reasons import SendErrorKind


@dataclass(frozen=True)
class DeadLetter:
    id: int
    created_at: float
    target: Target
    message: dict[str, Any]
    kind: str
    error: str
    attempts: int
    inbound_key: str | None
    session: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> DeadLetter:
        return cls(
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": self.created_at,
            "target": self.target.address,
            "kind": self.kind,
            "error": self.error,
            "attempts": self.attempts,
            "inbound_key": self.inbound_key,
            "session": self.session,
            "preview": _preview(self.message),
        }


def _preview(message: dict[str, Any]) -> str:
    for block in message.get("blocks", []):
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            text: str = block["text"]
            return text[:80] + ("…" if len(text) > 80 else "")
    return ""


class DeadLetters:
    def __init__(self, db: Database) -> None:
        self._db = db
        self.size = 0

    async def load(self) -> None:
        self.size = await self._db.call(
            lambda c: int(c.execute("SELECT COUNT(*) FROM dlq").fetchone()[0])
        )

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
        self.size += 1
        return entry_id

    async def list(self, limit: int = 100) -> list[DeadLetter]:
        def read(conn: sqlite3.Connection) -> list[DeadLetter]:
            rows = conn.execute("SELECT * FROM dlq ORDER BY id LIMIT ?", (limit,)).fetchall()
            return [DeadLetter.from_row(r) for r in rows]

        return await self._db.call(read)

    async def take(self, entry_id: int) -> DeadLetter | None:
        """Remove and return one entry (for replay; a failed replay re-enters the DLQ)."""

        def write(conn: sqlite3.Connection) -> DeadLetter | None:
            row = conn.execute("SELECT * FROM dlq WHERE id = ?", (entry_id,)).fetchone()
            if row is None:
                return None
            conn.execute("DELETE FROM dlq WHERE id = ?", (entry_id,))
            return DeadLetter.from_row(row)

        entry = await self._db.call(write)
        if entry is not None:
            self.size = max(0, self.size - 1)
        return entry


class DeadTargets:
    """Targets that answered forbidden/not-found: later sends skip straight to the DLQ.

    A target comes back to life when its chat writes to us again (the user unblocked the bot).
    """

    def __init__(self, db: Database) -> None:
        self._db = db
        self._dead: dict[str, str] = {}

    async def load(self) -> None:
        rows = await self._db.call(
            lambda c: c.execute("SELECT address, kind FROM dead_targets").fetchall()
        )
        self._dead = {r["address"]: r["kind"] for r in rows}

    def kind(self, target: Target) -> str | None:
        return self._dead.get(target.address)

    def addresses(self) -> dict[str, str]:
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
