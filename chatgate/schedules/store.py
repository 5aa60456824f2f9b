"""Where jobs, their cursors, pause flags and run history live: SQLite (one process) or Redis
(every replica sees one set). The cursor of a job is the newest instant already decided; it only
moves forward, so a replica with a stale view never decides an instant twice."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from chatgate.schedules.jobs import RunRecord, ScheduledJob
from chatgate.state.sqlite.side import SideDatabase

DB_FILE = "schedules.db"
KEEP_RUNS = 50

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sched_jobs (id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sched_cursor (id TEXT PRIMARY KEY, cursor REAL NOT NULL);
CREATE TABLE IF NOT EXISTS sched_paused (id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS sched_runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sched_runs_job ON sched_runs(job_id, seq);
"""


@dataclass(frozen=True)
class ChatCap:
    """At most ``most`` jobs an agent made (source `chat`) that deliver to ``to`` alone. The
    store checks it where it saves the job, so replicas adding at the same moment cannot both
    take the last place."""

    to: str
    most: int

    def counts(self, data: Mapping[str, Any]) -> bool:
        """Whether a stored job (its `to_dict`) takes one of the places."""
        deliver = data.get("spec", {}).get("deliver", {})
        return data.get("source") == "chat" and deliver.get("to") == [self.to]


class CapReached(Exception):
    """The chat has its ``ChatCap.most`` jobs already; nothing was saved."""


class JobStore(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def save(self, job: ScheduledJob, cap: ChatCap | None = None) -> bool:
        """Store a runtime job; False when its id is taken; `CapReached` past ``cap``."""
        ...

    async def delete(self, job_id: str) -> bool:
        """Remove a runtime job with its cursor, pause flag and history."""
        ...

    async def jobs(self) -> list[ScheduledJob]: ...
    async def cursor(self, job_id: str, start: float) -> float:
        """The job's cursor, set to ``start`` first when it has none (all replicas agree)."""
        ...

    async def advance(self, job_id: str, expected: float, to: float) -> bool:
        """Move the cursor from ``expected`` to ``to``; False when another process moved it
        first (that one decided these instants)."""
        ...

    async def paused(self) -> set[str]: ...
    async def set_paused(self, job_id: str, paused: bool) -> None: ...
    async def add_run(self, job_id: str, record: RunRecord) -> None: ...
    async def runs(self, job_id: str, limit: int) -> list[RunRecord]:
        """Newest first."""
        ...

    async def compact(self) -> None:
        """Make deleted jobs unrecoverable from the store's files (after a privacy erase)."""
        ...


class SqliteJobStore:
    """One connection on worker threads, serialised by a lock (jobs are low-volume)."""

    def __init__(self, path: Path) -> None:
        self._db = SideDatabase(path, _SCHEMA, what="job store")
        self._call = self._db.call

    async def open(self) -> None:
        await self._db.open()

    async def close(self) -> None:
        await self._db.close()

    async def compact(self) -> None:
        await self._db.compact()

    async def save(self, job: ScheduledJob, cap: ChatCap | None = None) -> bool:
        data = json.dumps(job.to_dict())

        def run(c: sqlite3.Connection) -> bool:
            if cap is not None:
                rows = c.execute("SELECT data FROM sched_jobs").fetchall()
                if sum(cap.counts(json.loads(row[0])) for row in rows) >= cap.most:
                    raise CapReached(job.id)
            sql = "INSERT OR IGNORE INTO sched_jobs(id, data) VALUES (?, ?)"
            return bool(c.execute(sql, (job.id, data)).rowcount == 1)

        return await self._call(run)

    async def delete(self, job_id: str) -> bool:
        def run(c: sqlite3.Connection) -> bool:
            found = c.execute("DELETE FROM sched_jobs WHERE id = ?", (job_id,)).rowcount == 1
            for table, column in (
                ("sched_cursor", "id"),
                ("sched_paused", "id"),
                ("sched_runs", "job_id"),
            ):
                c.execute(f"DELETE FROM {table} WHERE {column} = ?", (job_id,))
            return found

        return await self._call(run)

    async def jobs(self) -> list[ScheduledJob]:
        rows = await self._call(lambda c: c.execute("SELECT data FROM sched_jobs").fetchall())
        return [ScheduledJob.from_dict(json.loads(row[0])) for row in rows]

    async def cursor(self, job_id: str, start: float) -> float:
        def run(c: sqlite3.Connection) -> float:
            c.execute(
                "INSERT OR IGNORE INTO sched_cursor(id, cursor) VALUES (?, ?)", (job_id, start)
            )
            row = c.execute("SELECT cursor FROM sched_cursor WHERE id = ?", (job_id,)).fetchone()
            return float(row[0])

        return await self._call(run)

    async def advance(self, job_id: str, expected: float, to: float) -> bool:
        return await self._call(
            lambda c: (
                c.execute(
                    "UPDATE sched_cursor SET cursor = ? WHERE id = ? AND cursor = ?",
                    (to, job_id, expected),
                ).rowcount
                == 1
            )
        )

    async def paused(self) -> set[str]:
        rows = await self._call(lambda c: c.execute("SELECT id FROM sched_paused").fetchall())
        return {str(row[0]) for row in rows}

    async def set_paused(self, job_id: str, paused: bool) -> None:
        sql = (
            "INSERT OR IGNORE INTO sched_paused(id) VALUES (?)"
            if paused
            else "DELETE FROM sched_paused WHERE id = ?"
        )
        await self._call(lambda c: c.execute(sql, (job_id,)))

    async def add_run(self, job_id: str, record: RunRecord) -> None:
        data = json.dumps(record.to_dict())

        def run(c: sqlite3.Connection) -> None:
            c.execute("INSERT INTO sched_runs(job_id, data) VALUES (?, ?)", (job_id, data))
            c.execute(
                "DELETE FROM sched_runs WHERE job_id = ? AND seq NOT IN (SELECT seq FROM"
                " sched_runs WHERE job_id = ? ORDER BY seq DESC LIMIT ?)",
                (job_id, job_id, KEEP_RUNS),
            )

        await self._call(run)

    async def runs(self, job_id: str, limit: int) -> list[RunRecord]:
        rows = await self._call(
            lambda c: c.execute(
                "SELECT data FROM sched_runs WHERE job_id = ? ORDER BY seq DESC LIMIT ?",
                (job_id, limit),
            ).fetchall()
        )
        return [RunRecord.from_dict(json.loads(row[0])) for row in rows]
