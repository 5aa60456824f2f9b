"""Where budget counters live: SQLite (one process) or Redis (every replica shares them).

A counter is keyed by rule name, scope id and period start (`policies.budgets.counter_key`).
A model call reserves its estimate on every counter of the turn in one atomic step (all or
none: a transaction here, one Lua script on Redis) and settles it to the reported usage; a
reservation a crash left behind expires at its deadline.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from chatgate.budgets.settling import Later, Settle, SettleQueue
from chatgate.policies.budgets import Charge, Usage, admits, split_key
from chatgate.state.sqlite.side import SideDatabase

T = TypeVar("T")
DB_FILE = "budgets.db"
WARN_SUFFIX = "|warn"  # a counter's warned-once flag: the counter key with this suffix
REFUSED_PREFIX = "refused|"  # a user's refused-once-an-hour flag in a group chat


def refusal_flag(user: str, chat: str) -> str:
    """The flag of the one refusal an hour that ``user`` is told in group ``chat``."""
    return f"{REFUSED_PREFIX}{user}|{chat}"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS budget_counters (
    key TEXT PRIMARY KEY, rule TEXT NOT NULL, scope TEXT NOT NULL, start TEXT NOT NULL,
    nano INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0,
    turns INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS budget_counters_scope ON budget_counters(scope);
CREATE TABLE IF NOT EXISTS budget_reservations (
    ticket TEXT NOT NULL, key TEXT NOT NULL, nano INTEGER NOT NULL, tokens INTEGER NOT NULL,
    turns INTEGER NOT NULL, expires REAL NOT NULL, PRIMARY KEY (ticket, key));
CREATE INDEX IF NOT EXISTS budget_reservations_key ON budget_reservations(key, expires);
CREATE TABLE IF NOT EXISTS budget_flags (key TEXT PRIMARY KEY, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS budget_calls (
    agent TEXT PRIMARY KEY, calls INTEGER NOT NULL, nano INTEGER NOT NULL,
    tokens INTEGER NOT NULL);
"""


@dataclass(frozen=True)
class Spent:
    """What a settled call cost: nano-USD, tokens in + out, whether it was the turn's first,
    and whether it counts in the agent's running average (a chat call that reported usage)."""

    nano: int = 0
    tokens: int = 0
    turns: int = 0
    average: bool = True

    @property
    def averaged(self) -> bool:
        return self.average and self.tokens > 0


@dataclass(frozen=True)
class CallAverage:
    calls: int = 0
    nano: int = 0
    tokens: int = 0

    def per_call(self) -> tuple[int, int] | None:
        """(nano, tokens) per model call, or None without history."""
        if self.calls <= 0:
            return None
        return self.nano // self.calls, self.tokens // self.calls


class BudgetStore(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...

    async def read(self, keys: Sequence[str], now: float) -> dict[str, Usage]:
        """The counters (unexpired reservations included); a missing one reads as zero."""
        ...

    async def reserve(
        self, ticket: str, charges: Sequence[Charge], now: float, expires: float
    ) -> str | None:
        """Reserve every charge, or none: None when admitted, else the key that refused."""
        ...

    async def reserve_reading(
        self, ticket: str, charges: Sequence[Charge], now: float, expires: float
    ) -> tuple[str | None, dict[str, Usage]]:
        """`reserve`, also answering each counter's use before it (the turn's ladder reads it:
        one round trip for both)."""
        ...

    async def settle(self, ticket: str, keys: Sequence[str], spent: Spent, agent: str) -> None:
        """Drop the ticket's reservations, add what the call really cost to each counter and
        (when the provider reported usage) to ``agent``'s running average: queued, written
        with the store's next round trip (`settling`)."""
        ...

    async def release(self, ticket: str, keys: Sequence[str]) -> None:
        """Drop the ticket's reservations unused (a turn that made no model call after all)."""
        ...

    async def once(self, key: str, now: float, expires: float) -> bool:
        """True for the first caller only (until ``expires``): a notice sent once per period."""
        ...

    async def average(self, agent: str) -> CallAverage: ...

    async def counters(self) -> dict[str, Usage]:
        """Every counter (settled spend), by key."""
        ...

    async def forget(self, scope: str) -> int:
        """Delete every counter of scope id ``scope`` (a reset, a privacy erase); how many."""
        ...

    async def forget_flags(self, user: str) -> int:
        """Delete the group refusal flags of ``user`` (a privacy erase: they name the person
        and the group); how many."""
        ...

    async def compact(self) -> None:
        """Make forgotten counters unrecoverable from the store's files (a privacy erase)."""
        ...


class SqliteBudgetStore:
    """One connection on worker threads, serialised by a lock; each call is one transaction."""

    def __init__(self, path: Path, later: Later | None = None) -> None:
        self._db = SideDatabase(path, _SCHEMA, what="budget store", synchronous="NORMAL")
        self._queue = SettleQueue(self._flush, *([later] if later else []))

    async def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn`` in one transaction, with the queued settles written first."""
        queued = self._queue.take()
        if not queued:
            return await self._db.call(fn)

        def run(c: sqlite3.Connection) -> T:
            for item in queued:
                _settle(c, item)
            return fn(c)

        try:
            return await self._db.call(run)
        except BaseException:
            self._queue.give_back(queued)  # rolled back: written with the next round trip
            raise

    async def _flush(self) -> None:
        await self._call(lambda c: None)

    async def open(self) -> None:
        await self._db.open()
        now = time.time()
        await self._db.call(
            lambda c: c.execute("DELETE FROM budget_reservations WHERE expires <= ?", (now,))
        )

    async def close(self) -> None:
        try:
            await self._queue.drain()
        finally:
            await self._db.close()

    async def compact(self) -> None:
        await self._db.compact()

    async def read(self, keys: Sequence[str], now: float) -> dict[str, Usage]:
        return await self._call(lambda c: {k: _usage(c, k, now) for k in keys})

    async def reserve(
        self, ticket: str, charges: Sequence[Charge], now: float, expires: float
    ) -> str | None:
        return (await self.reserve_reading(ticket, charges, now, expires))[0]

    async def reserve_reading(
        self, ticket: str, charges: Sequence[Charge], now: float, expires: float
    ) -> tuple[str | None, dict[str, Usage]]:
        def run(c: sqlite3.Connection) -> tuple[str | None, dict[str, Usage]]:
            usage = {charge.key: _usage(c, charge.key, now) for charge in charges}
            for charge in charges:
                if not admits(charge, usage[charge.key]):
                    return charge.key, usage
            c.executemany(
                "INSERT OR REPLACE INTO budget_reservations VALUES (?, ?, ?, ?, ?, ?)",
                [(ticket, ch.key, ch.nano, ch.tokens, ch.turns, expires) for ch in charges],
            )
            return None, usage

        return await self._call(run)

    async def settle(self, ticket: str, keys: Sequence[str], spent: Spent, agent: str) -> None:
        self._queue.add(settle_of(ticket, keys, spent, agent))

    async def release(self, ticket: str, keys: Sequence[str]) -> None:
        def run(c: sqlite3.Connection) -> None:
            c.execute("DELETE FROM budget_reservations WHERE ticket = ?", (ticket,))

        await self._call(run)

    async def once(self, key: str, now: float, expires: float) -> bool:
        def run(c: sqlite3.Connection) -> bool:
            c.execute("DELETE FROM budget_flags WHERE key = ? AND expires <= ?", (key, now))
            sql = "INSERT OR IGNORE INTO budget_flags VALUES (?, ?)"
            return bool(c.execute(sql, (key, expires)).rowcount == 1)

        return await self._call(run)

    async def average(self, agent: str) -> CallAverage:
        def run(c: sqlite3.Connection) -> CallAverage:
            sql = "SELECT calls, nano, tokens FROM budget_calls WHERE agent = ?"
            row = c.execute(sql, (agent,)).fetchone()
            return CallAverage(*row) if row else CallAverage()

        return await self._call(run)

    async def counters(self) -> dict[str, Usage]:
        def run(c: sqlite3.Connection) -> dict[str, Usage]:
            rows = c.execute("SELECT key, nano, tokens, turns FROM budget_counters").fetchall()
            return {key: Usage(nano, tokens, turns) for key, nano, tokens, turns in rows}

        return await self._call(run)

    async def forget(self, scope: str) -> int:
        def run(c: sqlite3.Connection) -> int:
            keys = [
                row[0]
                for row in c.execute("SELECT key FROM budget_counters WHERE scope = ?", (scope,))
            ]
            for key in keys:
                c.execute("DELETE FROM budget_reservations WHERE key = ?", (key,))
                sql = "DELETE FROM budget_flags WHERE substr(key, 1, ?) = ?"
                c.execute(sql, (len(key), key))
            c.execute("DELETE FROM budget_counters WHERE scope = ?", (scope,))
            return len(keys)

        return await self._call(run)

    async def forget_flags(self, user: str) -> int:
        prefix = refusal_flag(user, "")

        def run(c: sqlite3.Connection) -> int:
            sql = "DELETE FROM budget_flags WHERE substr(key, 1, ?) = ?"
            return int(c.execute(sql, (len(prefix), prefix)).rowcount)

        return await self._call(run)


def settle_of(ticket: str, keys: Sequence[str], spent: Spent, agent: str) -> Settle:
    return Settle(ticket, tuple(keys), spent.nano, spent.tokens, spent.turns, spent.averaged, agent)


def _settle(c: sqlite3.Connection, item: Settle) -> None:
    """Drop the ticket's reservations, add the cost to each counter and the agent's average."""
    c.execute("DELETE FROM budget_reservations WHERE ticket = ?", (item.ticket,))
    for key in item.keys:
        rule, scope, start = split_key(key)
        c.execute(
            "INSERT INTO budget_counters VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) "
            "DO UPDATE SET nano = nano + excluded.nano, tokens = tokens + excluded.tokens,"
            " turns = turns + excluded.turns",
            (key, rule, scope, start, item.nano, item.tokens, item.turns),
        )
    if item.averaged:
        c.execute(
            "INSERT INTO budget_calls VALUES (?, 1, ?, ?) ON CONFLICT(agent) DO UPDATE SET "
            "calls = calls + 1, nano = nano + excluded.nano, tokens = tokens + excluded.tokens",
            (item.agent, item.nano, item.tokens),
        )


_USAGE = (
    "SELECT COALESCE(SUM(n), 0), COALESCE(SUM(t), 0), COALESCE(SUM(u), 0), COALESCE(SUM(rn), 0),"
    " COALESCE(SUM(rt), 0), COALESCE(SUM(ru), 0) FROM ("
    " SELECT nano n, tokens t, turns u, 0 rn, 0 rt, 0 ru FROM budget_counters WHERE key = ?1"
    " UNION ALL SELECT 0, 0, 0, nano, tokens, turns FROM budget_reservations"
    " WHERE key = ?1 AND expires > ?2)"
)


def _usage(c: sqlite3.Connection, key: str, now: float) -> Usage:
    """The counter and its live reservations, one statement (expired ones are not counted; a
    crash's leftovers are deleted as the store opens)."""
    return Usage(*c.execute(_USAGE, (key, now)).fetchone())
