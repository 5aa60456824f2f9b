"""Long button payloads on SQLite, referenced by a short id in a platform's callback data.

Telegram allows 64 bytes of callback data; presentation swaps longer values for "ref:<id>" via this
store and the adapter resolves the id when the button is pressed (also after a restart).
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import time
from collections import OrderedDict

from chatgate.presentation.degrade import REF_PREFIX
from chatgate.state.sqlite.db import Database

MEMORY_ENTRIES = 10_000


class SqliteCallbacks:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._memory: OrderedDict[str, str] = OrderedDict()
        self._pending: set[asyncio.Task[None]] = set()

    def put(self, value: str) -> str:
        """Sync by contract (presentation is pure); the row is written behind."""
        ref = hashlib.blake2s(value.encode(), digest_size=9).hexdigest()
        if ref not in self._memory:
            self._memory[ref] = value
            if len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)
            task = asyncio.get_running_loop().create_task(self._persist(ref, value))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        return ref

    async def _persist(self, ref: str, value: str) -> None:
        await self._db.call(
            lambda c: c.execute(
                "INSERT OR IGNORE INTO callbacks(ref, value, created_at) VALUES (?,?,?)",
                (ref, value, time.time()),
            )
        )

    async def flush(self) -> None:
        """Wait for payloads still being written (shutdown)."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    async def resolve(self, data: str) -> str | None:
        """The stored value for "ref:<id>" (or a bare id), or None when unknown."""
        ref = data[len(REF_PREFIX) :] if data.startswith(REF_PREFIX) else data
        if ref in self._memory:
            return self._memory[ref]

        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT value FROM callbacks WHERE ref = ?", (ref,)).fetchone()
            return str(row["value"]) if row else None

        return await self._db.call(read)
