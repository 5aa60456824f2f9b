"""Pairing: unknown DM senders get a code an operator approves with `chatgate pairing approve`.

The SQL operations take a connection so the daemon (through Database) and the CLI (directly, while
the daemon runs) share one implementation; the decisions themselves are in policies.pairing.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass

from chatgate.gateway.db import Database
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


@dataclass(frozen=True)
class Approved:
    channel: str
    sender_id: str
    sender_name: str
    approved_at: float
    chat_id: str


def pending_codes(conn: sqlite3.Connection, channel: str, now: float) -> list[PendingCode]:
    conn.execute("DELETE FROM pairing_pending WHERE issued_at < ?", (now - CODE_TTL_S,))
    rows = conn.execute(
        "SELECT code, sender_id, issued_at, sender_name FROM pairing_pending WHERE channel = ?"
        " ORDER BY issued_at",
        (channel,),
    ).fetchall()
    return [PendingCode(r["code"], r["sender_id"], r["issued_at"], r["sender_name"]) for r in rows]


def issue_code(
    conn: sqlite3.Connection,
    channel: str,
    sender_id: str,
    sender_name: str,
    chat_id: str,
    now: float,
    rng: random.Random,
) -> IssueDecision:
    decision = decide_issue(pending_codes(conn, channel, now), sender_id, now, rng)
    if decision.outcome is IssueOutcome.ISSUED and decision.code:
        conn.execute(
            "INSERT INTO pairing_pending(channel, code, sender_id, sender_name, chat_id, issued_at)"
            " VALUES (?,?,?,?,?,?)",
            (channel, decision.code, sender_id, sender_name, chat_id, now),
        )
    return decision


def approve_code(conn: sqlite3.Connection, channel: str, code: str, now: float) -> ApprovalDecision:
    pending = pending_codes(conn, channel, now)
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


def deny_code(conn: sqlite3.Connection, channel: str, code: str) -> bool:
    cur = conn.execute(
        "DELETE FROM pairing_pending WHERE channel = ? AND code = ?",
        (channel, normalize_code(code)),
    )
    return cur.rowcount > 0


def list_approved(conn: sqlite3.Connection, channel: str | None = None) -> list[Approved]:
    query = "SELECT channel, sender_id, sender_name, approved_at, chat_id FROM pairing_approved"
    params: tuple[str, ...] = ()
    if channel:
        query += " WHERE channel = ?"
        params = (channel,)
    return [
        Approved(r["channel"], r["sender_id"], r["sender_name"], r["approved_at"], r["chat_id"])
        for r in conn.execute(query + " ORDER BY approved_at", params).fetchall()
    ]


def revoke(conn: sqlite3.Connection, channel: str, sender_id: str) -> bool:
    cur = conn.execute(
        "DELETE FROM pairing_approved WHERE channel = ? AND sender_id = ?", (channel, sender_id)
    )
    return cur.rowcount > 0


class PairingService:
    """The daemon's view: an in-memory approved set backed by the database."""

    def __init__(self, db: Database, rng: random.Random | None = None) -> None:
        self._db = db
        self._rng = rng or random.SystemRandom()
        self._approved: set[tuple[str, str]] = set()

    async def load(self) -> None:
        approved = await self._db.call(list_approved)
        self._approved = {(a.channel, a.sender_id) for a in approved}

    async def is_approved(self, channel: str, sender_id: str) -> bool:
        """Cached; a miss re-reads the database so CLI approvals apply without a restart."""
        if (channel, sender_id) in self._approved:
            return True
        found = await self._db.call(
            lambda c: c.execute(
                "SELECT 1 FROM pairing_approved WHERE channel = ? AND sender_id = ?",
                (channel, sender_id),
            ).fetchone()
        )
        if found:
            self._approved.add((channel, sender_id))
        return found is not None

    async def request(
        self, channel: str, sender_id: str, sender_name: str, chat_id: str, now: float
    ) -> IssueDecision:
        return await self._db.call(
            lambda c: issue_code(c, channel, sender_id, sender_name, chat_id, now, self._rng)
        )

    async def take_unnotified(self) -> list[Approved]:
        """Approvals made (by the CLI) since the last call, so the user can be told."""

        def write(conn: sqlite3.Connection) -> list[Approved]:
            rows = conn.execute(
                "SELECT channel, sender_id, sender_name, approved_at, chat_id FROM pairing_approved"
                " WHERE notified = 0"
            ).fetchall()
            conn.execute("UPDATE pairing_approved SET notified = 1 WHERE notified = 0")
            return [
                Approved(
                    r["channel"], r["sender_id"], r["sender_name"], r["approved_at"], r["chat_id"]
                )
                for r in rows
            ]

        found = await self._db.call(write)
        self._approved.update((a.channel, a.sender_id) for a in found)
        return found

    async def pending_count(self, now: float) -> int:
        return await self._db.call(
            lambda c: int(
                c.execute(
                    "SELECT COUNT(*) FROM pairing_pending WHERE issued_at >= ?", (now - CODE_TTL_S,)
                ).fetchone()[0]
            )
        )
