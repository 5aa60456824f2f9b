"""Commands over the daemon's state: dlq, pairing, sessions, why."""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

from chatgate.cli.api_client import call
from chatgate.cli.common import EX_UNAVAILABLE, EX_USAGE, die, open_state
from chatgate.config.loader import LoadedConfig
from chatgate.gateway import pairing
from chatgate.policies.pairing import ApprovalOutcome


def _when(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def dlq_list(loaded: LoadedConfig, *, as_json: bool) -> int:
    from chatgate.gateway.dlq import DeadLetter

    with open_state(loaded) as conn:
        rows = conn.execute("SELECT * FROM dlq ORDER BY id").fetchall()
    entries = [DeadLetter.from_row(r).to_dict() for r in rows]
    if as_json:
        print(json.dumps(entries, indent=2))
        return 0
    if not entries:
        print("dead-letter queue is empty")
        return 0
    for e in entries:
        print(
            f"#{e['id']}  {_when(e['created_at'])}  {e['target']}  {e['kind']}  attempts={e['attempts']}"
        )
        print(f"      error: {e['error']}")
        if e["preview"]:
            print(f"      reply: {e['preview']}")
    return 0


def dlq_drop(loaded: LoadedConfig, entry_id: int) -> int:
    with open_state(loaded) as conn:
        removed = conn.execute("DELETE FROM dlq WHERE id = ?", (entry_id,)).rowcount
    if not removed:
        die(f"no DLQ entry #{entry_id}", EX_USAGE)
    print(f"dropped DLQ entry #{entry_id}")
    return 0


def dlq_replay(loaded: LoadedConfig, entry_id: int, url: str | None) -> int:
    result = call(loaded, f"/api/dlq/{entry_id}/replay", method="POST", url=url)
    if not result.get("found"):
        die(f"no DLQ entry #{entry_id}", EX_USAGE)
    status = result.get("status")
    print(
        f"DLQ entry #{entry_id}: {status}" + (f" ({result['kind']})" if result.get("kind") else "")
    )
    return 0 if status == "sent" else EX_UNAVAILABLE


def pairing_list(loaded: LoadedConfig, *, as_json: bool) -> int:
    now = time.time()
    with open_state(loaded) as conn:
        channels = [
            r[0] for r in conn.execute("SELECT DISTINCT channel FROM pairing_pending").fetchall()
        ]
        pending = {ch: pairing.pending_codes(conn, ch, now) for ch in channels}
        approved = pairing.list_approved(conn)
    if as_json:
        print(
            json.dumps(
                {
                    "pending": [
                        {
                            "channel": ch,
                            "code": p.code,
                            "sender_id": p.sender_id,
                            "sender_name": p.sender_name,
                            "issued_at": p.issued_at,
                        }
                        for ch, codes in pending.items()
                        for p in codes
                    ],
                    "approved": [a.__dict__ for a in approved],
                },
                indent=2,
            )
        )
        return 0
    print("pending:")
    count = 0
    for ch, codes in pending.items():
        for p in codes:
            count += 1
            print(
                f"  {ch:<10} {p.code}  {p.sender_id} {p.sender_name!r}  requested {_when(p.issued_at)}"
            )
    if not count:
        print("  (none)")
    print("approved:")
    for a in approved:
        print(f"  {a.channel:<10} {a.sender_id} {a.sender_name!r}  since {_when(a.approved_at)}")
    if not approved:
        print("  (none)")
    return 0


def pairing_approve(loaded: LoadedConfig, channel: str, code: str) -> int:
    with open_state(loaded) as conn:
        conn.execute("BEGIN IMMEDIATE")
        decision = pairing.approve_code(conn, channel, code, time.time())
        conn.execute("COMMIT")
    if decision.outcome is ApprovalOutcome.APPROVED:
        print(f"approved {channel} user {decision.sender_id}; they are notified and can write now")
        return 0
    messages = {
        ApprovalOutcome.UNKNOWN_CODE: f"no pending code {code!r} on {channel}",
        ApprovalOutcome.EXPIRED: f"code {code!r} has expired; ask the user to write again for a new one",
        ApprovalOutcome.LOCKED_OUT: "too many wrong codes; approvals on this channel are locked until "
        + (_when(decision.locked_until) if decision.locked_until else "later"),
    }
    die(messages.get(decision.outcome, decision.outcome.value), EX_USAGE)


def pairing_deny(loaded: LoadedConfig, channel: str, code: str) -> int:
    with open_state(loaded) as conn:
        removed = pairing.deny_code(conn, channel, code)
    if not removed:
        die(f"no pending code {code!r} on {channel}", EX_USAGE)
    print(f"denied code {code} on {channel}")
    return 0


def pairing_revoke(loaded: LoadedConfig, channel: str, sender_id: str) -> int:
    with open_state(loaded) as conn:
        removed = pairing.revoke(conn, channel, sender_id)
    if not removed:
        die(f"{channel} user {sender_id} is not approved", EX_USAGE)
    print(
        f"revoked {channel} user {sender_id} (takes effect on the daemon's next restart or reload)"
    )
    return 0


def sessions_list(loaded: LoadedConfig, *, as_json: bool) -> int:
    with open_state(loaded) as conn:
        rows = [
            dict(r)
            for r in conn.execute(
                "SELECT key, epoch, message_count, updated_at FROM sessions"
                " ORDER BY updated_at DESC LIMIT 200"
            ).fetchall()
        ]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        print(
            f"{r['key']}  epoch={r['epoch']}  messages={r['message_count']}  updated {_when(r['updated_at'])}"
        )
    if not rows:
        print("no sessions yet")
    return 0


def sessions_show(loaded: LoadedConfig, key: str) -> int:
    with open_state(loaded) as conn:
        row = conn.execute("SELECT epoch FROM sessions WHERE key = ?", (key,)).fetchone()
        if row is None:
            die(f"no session {key!r}", EX_USAGE)
        messages = conn.execute(
            "SELECT role, content, name, at FROM messages WHERE session_key = ? AND epoch = ? ORDER BY id",
            (key, row["epoch"]),
        ).fetchall()
    for m in messages:
        who = m["role"] + (f" ({m['name']})" if m["name"] else "")
        print(f"[{_when(m['at'])}] {who}: {m['content']}")
    return 0


def why(
    loaded: LoadedConfig, channel: str, message_id: str | None, user: str | None, *, as_json: bool
) -> int:
    """The decision trail of one message, or of a user's recent messages."""
    with open_state(loaded) as conn:
        if message_id is not None:
            rows = conn.execute(
                "SELECT * FROM inbound WHERE channel = ? AND (message_id = ? OR key = ?)",
                (channel, message_id, message_id),
            ).fetchall()
        elif user is not None:
            rows = conn.execute(
                "SELECT * FROM inbound WHERE channel = ? AND sender_id = ? ORDER BY seq DESC LIMIT 10",
                (channel, user),
            ).fetchall()
        else:
            die("give a MESSAGE_ID or --user ID", EX_USAGE)
    trails = [_trail(dict(r)) for r in rows]
    if as_json:
        print(json.dumps(trails, indent=2))
        return 0
    if not trails:
        print("no such message in the journal (it may be older than the dedupe window)")
        return 1
    for t in trails:
        print(f"{t['key']} at {_when(t['received_at'])}: {t['summary']}")
    return 0


def _trail(row: dict[str, Any]) -> dict[str, Any]:
    state, stage, reason, delivery = row["state"], row["stage"], row["reason"], row["delivery"]
    if state == "dropped":
        summary = f"dropped at {stage}: {reason}"
    elif state == "done":
        summary = f"answered ({reason})"
        if delivery and delivery != "sent":
            summary += f", delivery {delivery}"
            if delivery in ("undelivered", "dead_target"):
                summary += ", in DLQ"
        elif delivery == "sent":
            summary += ", delivered"
    elif state == "answered":
        summary = f"answered ({reason}), delivery not finished yet"
    else:
        summary = "accepted, turn not finished yet"
    return {
        "key": row["key"],
        "received_at": row["received_at"],
        "state": state,
        "stage": stage,
        "reason": reason,
        "delivery": delivery,
        "summary": summary,
        "delivery_ids": json.loads(row["delivery_ids"]) if row["delivery_ids"] else [],
    }
