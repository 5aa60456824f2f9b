"""A feature's own small SQLite file (budget counters, scheduled jobs): one connection used on
worker threads and serialised by a lock, each call one transaction. Low-volume stores that must
not queue behind the gateway's journal writer use it instead of the main database."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


class SideDatabase:
    def __init__(self, path: Path, schema: str, *, what: str, synchronous: str = "FULL") -> None:
        self.path = path
        self._schema = schema
        self._what = what
        self._synchronous = synchronous
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    async def open(self) -> None:
        def connect() -> sqlite3.Connection:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute("PRAGMA busy_timeout=5000")
            conn.executescript(self._schema)
            return conn

        self._conn = await asyncio.to_thread(connect)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:

            def close() -> None:
                with self._lock:  # after a call a cancelled caller left running on its thread
                    conn.close()

            await asyncio.to_thread(close)

    async def call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn`` in one transaction on a worker thread (rolled back when it raises)."""
        conn = self._conn
        if conn is None:
            raise RuntimeError(f"{self._what} is not open")

        def run() -> T:
            with self._lock:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = fn(conn)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                return result

        return await asyncio.to_thread(run)

    async def compact(self) -> None:
        """VACUUM away the freed pages, then empty the WAL (outside any transaction)."""
        conn = self._conn
        if conn is None:
            return

        def run() -> None:
            with self._lock:
                conn.execute("VACUUM")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

        await asyncio.to_thread(run)
