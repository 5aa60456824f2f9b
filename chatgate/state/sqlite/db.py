"""SQLite off the event loop: one connection on one thread, group-committed.

Every call runs on a dedicated thread. Calls made in one event-loop iteration are passed
together (one queue put, so one thread wake-up, for all of them), and calls that arrive while a
batch executes run in the next batch inside one transaction, so concurrent requests share one
thread hop and one commit instead of paying one each. A batch runs without per-call savepoints;
if any call fails, the batch is rolled back and re-run with a savepoint per call, so a failing call
still rolls back only its own work.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from chatgate.state.sqlite.schema import apply_schema

T = TypeVar("T")
log = logging.getLogger("chatgate.db")
_STOP = object()
_MAX_BATCH = 256
CHECKPOINT_EVERY_S = 1.0
# A write nobody waits for (the DONE mark) waits this long for a call to share a hop and commit.
BEHIND_S = 0.005


class DatabaseClosed(RuntimeError):
    pass


class _Inbox:
    """What the loop hands the database thread: a deque, and a pipe byte that wakes the thread.

    SimpleQueue.put wakes a sleeping thread while holding the GIL; when the woken thread lands on
    the loop's core it preempts a loop thread that still holds the GIL and must give the core
    back before it can run (two context switches per call). Here the wake-up byte is written
    with the GIL released (os.write), and only while the thread sleeps.
    """

    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        self._sleeping = False
        self._fds: tuple[int, int] | None = None

    def open(self) -> None:
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)  # a full pipe already holds enough wake-ups
        self._fds = (read_fd, write_fd)

    def close(self) -> None:
        if self._fds is not None:
            for fd in self._fds:
                os.close(fd)
            self._fds = None

    def put(self, item: Any) -> None:
        self._items.append(item)
        if self._sleeping and self._fds is not None:
            try:  # not contextlib.suppress: an object and two calls on every wake-up
                os.write(self._fds[1], b"\0")
            except BlockingIOError:
                pass

    def get(self) -> Any:
        """The next item, sleeping until there is one (database thread only)."""
        while not self._items:
            self._sleeping = True  # set before the re-check: a put after it writes a byte
            if not self._items and self._fds is not None:
                os.read(self._fds[0], 512)
            self._sleeping = False
        return self._items.popleft()

    def get_nowait(self) -> Any:
        if not self._items:
            raise queue.Empty
        return self._items.popleft()


class Database:
    def __init__(self, path: Path, *, synchronous: str = "normal") -> None:
        self.path = path
        self._synchronous = synchronous.upper()
        self._queue = _Inbox()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._open_error: BaseException | None = None
        self._checkpointer: threading.Thread | None = None
        self._stop_checkpoints = threading.Event()
        self._pending: list[Any] = []  # calls of this loop iteration, passed in one put
        self._flush_loop: asyncio.AbstractEventLoop | None = None
        self._behind: asyncio.TimerHandle | None = None
        self._maintenance = 0  # calls queued that run outside a transaction (VACUUM)

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._queue.open()
        self._thread = threading.Thread(target=self._run, name="chatgate-sqlite", daemon=True)
        self._thread.start()
        await asyncio.to_thread(self._ready.wait)
        if self._open_error is not None:
            self._thread = None
            self._queue.close()
            raise self._open_error
        self._stop_checkpoints.clear()
        self._checkpointer = threading.Thread(
            target=self._checkpoints, name="chatgate-sqlite-checkpoint", daemon=True
        )
        self._checkpointer.start()

    async def close(self) -> None:
        if self._thread is None:
            return
        self._stop_checkpoints.set()
        if self._checkpointer is not None:
            await asyncio.to_thread(self._checkpointer.join)
            self._checkpointer = None
        self._flush()
        self._queue.put(_STOP)
        await asyncio.to_thread(self._thread.join)
        self._thread = None
        self._queue.close()

    async def call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on the database thread inside a committed transaction."""
        if self._thread is None:
            raise DatabaseClosed("database is not open")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._enqueue((fn, future, loop), loop)
        return await future

    async def maintain(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on the database thread outside any transaction (VACUUM, a TRUNCATE
        checkpoint), in order with every other call: writers wait behind it, none fails."""
        self._maintenance += 1
        return await self.call(_Outside(fn))

    def submit(self, fn: Callable[[sqlite3.Connection], object]) -> None:
        """Queue a write nobody waits for; it still commits in order with every other call."""
        if self._thread is None:
            raise DatabaseClosed("database is not open")
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self._enqueue((fn, None, None), loop, behind=True)

    def _enqueue(
        self, item: Any, loop: asyncio.AbstractEventLoop | None, *, behind: bool = False
    ) -> None:
        """Collect ``item`` with the other calls of this loop iteration; the first schedules the
        put that hands them all to the database thread (waking it costs a syscall on each put).
        A write ``behind`` waits up to BEHIND_S for a call to ride along with."""
        if self._flush_loop is not None and self._flush_loop is not loop:
            self._flush()  # scheduled on another (or a closed) loop: run it now, in order
        self._pending.append(item)
        if loop is None:
            self._flush()
        elif behind:
            if self._flush_loop is None and self._behind is None:
                self._behind = loop.call_later(BEHIND_S, self._flush)
        elif self._flush_loop is None:
            self._flush_loop = loop
            loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_loop = None
        if self._behind is not None:
            self._behind.cancel()
            self._behind = None
        if self._pending:
            items, self._pending = self._pending, []
            self._queue.put(items)

    def _checkpoints(self) -> None:
        """Fold the WAL into the database from a second connection, so the writer never pays for
        a checkpoint (and its fsync) in the middle of a turn."""
        conn = connect(self.path, self._synchronous)
        try:
            while not self._stop_checkpoints.wait(CHECKPOINT_EVERY_S):
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error as exc:
                    log.warning("WAL checkpoint failed: %s", exc)
        finally:
            conn.close()

    def _run(self) -> None:
        try:
            conn = connect(self.path, self._synchronous)
            conn.execute("PRAGMA wal_autocheckpoint=0")
            apply_schema(conn)
        except BaseException as exc:
            self._open_error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            while True:
                items = self._queue.get()
                if items is _STOP:
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    return
                batch = list(items)
                while len(batch) < _MAX_BATCH:
                    try:
                        nxt = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is _STOP:
                        self._execute(conn, batch)
                        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                        return
                    batch.extend(nxt)
                self._execute(conn, batch)
        finally:
            conn.close()

    def _execute(self, conn: sqlite3.Connection, batch: list[Any]) -> None:
        if self._maintenance and any(isinstance(item[0], _Outside) for item in batch):
            self._execute_around(conn, batch)
            return
        if len(batch) == 1:
            self._execute_one(conn, batch[0])
            return
        results: list[tuple[bool, Any]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for fn, _, _ in batch:
                results.append((True, fn(conn)))
            conn.execute("COMMIT")
        except BaseException:
            # One call failed (or the commit did): undo the batch and run it again call by call.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self._execute_isolated(conn, batch)
            return
        self._deliver(batch, results)

    def _execute_around(self, conn: sqlite3.Connection, batch: list[Any]) -> None:
        """A batch holding maintenance: each call alone, maintenance outside a transaction."""
        for item in batch:
            if not isinstance(item[0], _Outside):
                self._execute_one(conn, item)
                continue
            self._maintenance -= 1
            try:
                outcome: tuple[bool, Any] = (True, item[0](conn))
            except BaseException as exc:
                outcome = (False, exc)
            self._deliver([item], [outcome])

    def _execute_isolated(self, conn: sqlite3.Connection, batch: list[Any]) -> None:
        """The batch in one transaction, each call under its own savepoint."""
        outcomes: list[tuple[bool, Any]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for fn, _, _ in batch:
                conn.execute("SAVEPOINT call")
                try:
                    result = fn(conn)
                    conn.execute("RELEASE call")
                    outcomes.append((True, result))
                except BaseException as exc:
                    if not conn.in_transaction:
                        raise  # SQLite rolled everything back (disk full, I/O error): all fail
                    conn.execute("ROLLBACK TO call")
                    conn.execute("RELEASE call")
                    outcomes.append((False, exc))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            outcomes = [(False, exc)] * len(batch)
        self._deliver(batch, outcomes)

    def _execute_one(self, conn: sqlite3.Connection, item: Any) -> None:
        """A lone call needs no savepoint: its transaction is its own."""
        fn = item[0]
        try:
            conn.execute("BEGIN IMMEDIATE")
            result = fn(conn)
            conn.execute("COMMIT")
            outcome: tuple[bool, Any] = (True, result)
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            outcome = (False, exc)
        self._deliver([item], [outcome])

    @staticmethod
    def _deliver(batch: list[Any], outcomes: list[tuple[bool, Any]]) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
        for (_, future, loop), (ok, value) in zip(batch, outcomes, strict=True):
            if future is None:
                if not ok:
                    log.error("background database write failed: %r", value)
                continue
            by_loop.setdefault(loop, []).append((future, ok, value))
        for loop, items in by_loop.items():
            try:
                loop.call_soon_threadsafe(_settle, items)
            except RuntimeError:
                pass  # the loop closed while we worked; nobody is waiting


class _Outside:
    """A call `Database.maintain` runs outside any transaction."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[sqlite3.Connection], Any]) -> None:
        self.fn = fn

    def __call__(self, conn: sqlite3.Connection) -> Any:
        return self.fn(conn)


def _settle(items: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for future, ok, value in items:
        if future.done():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


def _unchanged(value: None) -> None:
    return value


# Binding None, sqlite3 looks for an adapter and, finding none, raises and clears an
# AttributeError, for every None (~16 a turn: the journal marks' unset columns, a transcript
# line's name and meta; ~1 % of a turn's instructions). A registered adapter that hands None
# back is found at once. Process-wide, and nothing bound changes: None is still NULL.
sqlite3.register_adapter(type(None), _unchanged)


def connect(path: Path, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """A connection in WAL mode with autocommit off (we manage transactions explicitly)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=10000")
    return conn
