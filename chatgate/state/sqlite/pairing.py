"""Pairing on SQLite: pending codes, approvals (cached in memory) and failed-approval counts.

The decisions themselves are in policies.pairing; this module only stores them. Approvals are
cached because every DM from an approved sender asks; this process is the only writer.
"""

from __future__ import annotations

import random
import sqlite3

from chatgate.policies.pairing import (
    CODE_TTL_S,
    ApprovalDecision,
    ApprovalOutcome,
    IssueDecision,
    IssueOutcome,
    PendingCode,
    decide_approval,
    decide_issue,
    normalize_code,
)
from chatgate.state.records import Approved, PendingRequest
from chatgate.state.sqlite.db import Database


def _pending_codes(conn: sqlite3.Connection, channel: str, now: float) -> list[PendingCode]:
    conn.execute("DELETE FROM pairing_pending WHERE issued_at < ?", (now - CODE_TTL_S,))
    rows = conn.execute(
        "SELECT code, sender_id, issued_at, sender_name FROM pairing_pending WHERE channel = ?"
        " ORDER BY issued_at",
        (channel,),
    ).fetchall()
    return [PendingCode(r["code"], r["sender_id"], r["issued_at"], r["sender_name"]) for r in rows]


def _issue_code(
    conn: sqlite3.Connection,
    channel: str,
    sender_id: str,
    sender_name: str,
    chat_id: str,
    now: float,
    rng: random.Random,
) -> IssueDecision:
    decision = decide_issue(_pending_codes(conn, channel, now), sender_id, now, rng)
    if decision.outcome is IssueOutcome.ISSUED and decision.code:
        conn.execute(
            "INSERT INTO pairing_pending(channel, code, sender_id, sender_name, chat_id, issued_at)"
            " VALUES (?,?,?,?,?,?)",
            (channel, decision.code, sender_id, sender_name, chat_id, now),
        )
    return decision


def _approve_code(
    conn: sqlite3.Connection, channel: str, code: str, now: float
) -> ApprovalDecision:
    pending = _pending_codes(conn, channel, now)
    failures = [
        r[0]
        for r in conn.execute(
            "SELECT at FROM pairing_failures WHERE channel = ? ORDER BY at", (channel,)
        ).fetchall()
    ]
    decision = decide_approval(pending, normalize_code(code), now, failures)
    if decision.outcome is ApprovalOutcome.APPROVED and decision.sender_id is not None:
        row = conn.execute(
            "SELECT sender_name, chat_id FROM pairing_pending WHERE channel = ? AND code = ?",
            (channel, normalize_code(code)),
        ).fetchone()
        conn.execute(
            "DELETE FROM pairing_pending WHERE channel = ? AND sender_id = ?",
            (channel, decision.sender_id),
        )
        conn.execute(
            "INSERT OR REPLACE INTO pairing_approved(channel, sender_id, sender_name, approved_at,"
            " notified, chat_id) VALUES (?,?,?,?,0,?)",
            (
                channel,
                decision.sender_id,
                row["sender_name"] if row else "",
                now,
                row["chat_id"] if row else "",
            ),
        )
        conn.execute("DELETE FROM pairing_failures WHERE channel = ?", (channel,))
    elif decision.outcome in (ApprovalOutcome.UNKNOWN_CODE, ApprovalOutcome.EXPIRED):
        conn.execute("INSERT INTO pairing_failures(channel, at) VALUES (?, ?)", (channel, now))
    return decision


def _deny_code(conn: sqlite3.Connection, channel: str, code: str) -> bool:
    cur = conn.execute(
        "DELETE FROM pairing_pending WHERE channel = ? AND code = ?",
        (channel, normalize_code(code)),
    )
    return cur.rowcount > 0


def _list_approved(conn: sqlite3.Connection, channel: str | None = None) -> list[Approved]:
    query = "SELECT channel, sender_id, sender_name, approved_at, chat_id FROM pairing_approved"
    params: tuple[str, ...] = ()
    if channel:
        query += " WHERE channel = ?"
        params = (channel,)
    return _approved(conn.execute(query + " ORDER BY approved_at", params).fetchall())


def _revoke(conn: sqlite3.Connection, channel: str, sender_id: str) -> bool:
    cur = conn.execute(
        "DELETE FROM pairing_approved WHERE channel = ? AND sender_id = ?", (channel, sender_id)
    )
    return cur.rowcount > 0


def _approved(rows: list[sqlite3.Row]) -> list[Approved]:
    return [
        Approved(r["channel"], r["sender_id"], r["sender_name"], r["approved_at"], r["chat_id"])
        for r in rows
    ]


class SqlitePairing:
    def __init__(self, db: Database, rng: random.Random | None = None) -> None:
        self._db = db
        self._rng = rng or random.SystemRandom()
        self._approved: set[tuple[str, str]] = set()

    async def load(self) -> None:
        approved = await self._db.call(_list_approved)
        self._approved = {(a.channel, a.sender_id) for a in approved}

    async def is_approved(self, channel: str, sender_id: str) -> bool:
        return (channel, sender_id) in self._approved

    async def request(
        self, channel: str, sender_id: str, sender_name: str, chat_id: str, now: float
    ) -> IssueDecision:
        return await self._db.call(
            lambda c: _issue_code(c, channel, sender_id, sender_name, chat_id, now, self._rng)
        )

    async def approve(self, channel: str, code: str, now: float) -> ApprovalDecision:
        decision = await self._db.call(lambda c: _approve_code(c, channel, code, now))
        if decision.outcome is ApprovalOutcome.APPROVED and decision.sender_id is not None:
            self._approved.add((channel, decision.sender_id))
        return decision

    async def deny(self, channel: str, code: str) -> bool:
        return await self._db.call(lambda c: _deny_code(c, channel, code))

    async def revoke(self, channel: str, sender_id: str) -> bool:
        removed = await self._db.call(lambda c: _revoke(c, channel, sender_id))
        self._approved.discard((channel, sender_id))
        return removed

    async def pending(self, now: float) -> list[PendingRequest]:
        def read(conn: sqlite3.Connection) -> list[PendingRequest]:
            channels = [r[0] for r in conn.execute("SELECT DISTINCT channel FROM pairing_pending")]
            return [
                PendingRequest(ch, p.code, p.sender_id, p.sender_name, p.issued_at)
                for ch in channels
                for p in _pending_codes(conn, ch, now)
            ]

        return await self._db.call(read)

    async def approved(self, channel: str | None = None) -> list[Approved]:
        return await self._db.call(lambda c: _list_approved(c, channel))

    async def take_unnotified(self) -> list[Approved]:
        def write(conn: sqlite3.Connection) -> list[Approved]:
            rows = conn.execute(
                "SELECT channel, sender_id, sender_name, approved_at, chat_id FROM pairing_approved"
                " WHERE notified = 0"
            ).fetchall()
            conn.execute("UPDATE pairing_approved SET notified = 1 WHERE notified = 0")
            return _approved(rows)

        return await self._db.call(write)
