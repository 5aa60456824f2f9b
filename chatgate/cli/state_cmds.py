"""Commands over the gateway's state: dlq, pairing, sessions, why.

Each asks the running daemon's /api; when no daemon answers, it opens the configured store
itself (holding the state-dir lock, so no daemon starts meanwhile) and runs the same operation
through the same state protocols. Either way the answer is the same JSON, rendered here.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from chatgate.cli.api_client import DaemonUnreachable, call, request
from chatgate.cli.common import EX_UNAVAILABLE, EX_USAGE, die
from chatgate.config.loader import LoadedConfig
from chatgate.policies.pairing import ApprovalOutcome

Offline = Callable[[Any], Awaitable[dict[str, Any]]]


def _when(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def _ask(
    loaded: LoadedConfig,
    path: str,
    offline: Offline,
    *,
    method: str = "GET",
    body: dict[str, Any] | None = None,
    url: str | None = None,
) -> dict[str, Any]:
    try:
        return request(loaded, path, method=method, body=body, url=url)
    except DaemonUnreachable as exc:
        if url is not None:  # the operator named a daemon: do not silently use local state
            die(f"chatgate is not running ({exc})", EX_UNAVAILABLE)
    return asyncio.run(_offline(loaded, offline))


async def _offline(loaded: LoadedConfig, operation: Offline) -> dict[str, Any]:
    from chatgate.clock import SystemClock
    from chatgate.gateway.process.state_lock import StateDirInUse, StateLock
    from chatgate.state.factory import build_state

    loaded.state_dir.mkdir(parents=True, exist_ok=True)
    lock = StateLock(loaded.state_dir)
    try:
        lock.acquire()
    except StateDirInUse as exc:
        die(f"{exc}; its API does not answer, so its state cannot be changed now", EX_UNAVAILABLE)
    try:
        state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
        await state.open()
        try:
            return await operation(state)
        finally:
            await state.close()
    finally:
        lock.release()


def _now() -> float:
    import time

    return time.time()


# -- dlq ------------------------------------------------------------------------------------


def dlq_list(loaded: LoadedConfig, *, as_json: bool, url: str | None = None) -> int:
    from chatgate.state import admin

    entries = _ask(loaded, "/api/dlq", admin.dlq_list, url=url)["entries"]
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


def dlq_drop(loaded: LoadedConfig, entry_id: int, url: str | None = None) -> int:
    from chatgate.state import admin

    result = _ask(
        loaded,
        f"/api/dlq/{entry_id}",
        lambda state: admin.dlq_drop(state, entry_id),
        method="DELETE",
        url=url,
    )
    if not result.get("found"):
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
    if result.get("hint"):
        print(result["hint"])
    return 0 if status == "sent" else EX_UNAVAILABLE


# -- pairing --------------------------------------------------------------------------------


def pairing_list(loaded: LoadedConfig, *, as_json: bool, url: str | None = None) -> int:
    from chatgate.state import admin

    data = _ask(loaded, "/api/pairing", lambda state: admin.pairing_list(state, _now()), url=url)
    if as_json:
        print(json.dumps(data, indent=2))
        return 0
    print("pending:")
    for p in data["pending"]:
        print(
            f"  {p['channel']:<10} {p['code']}  {p['sender_id']} {p['sender_name']!r}"
            f"  requested {_when(p['issued_at'])}"
        )
    if not data["pending"]:
        print("  (none)")
    print("approved:")
    for a in data["approved"]:
        print(
            f"  {a['channel']:<10} {a['sender_id']} {a['sender_name']!r}"
            f"  since {_when(a['approved_at'])}"
        )
    if not data["approved"]:
        print("  (none)")
    return 0


def pairing_approve(loaded: LoadedConfig, channel: str, code: str, url: str | None = None) -> int:
    from chatgate.state import admin

    result = _ask(
        loaded,
        "/api/pairing/approve",
        lambda state: admin.pairing_approve(state, channel, code, _now()),
        method="POST",
        body={"channel": channel, "code": code},
        url=url,
    )
    if result.get("approved"):
        print(f"approved {channel} user {result['sender_id']}; they are notified and can write now")
        return 0
    outcome = result.get("outcome", "")
    locked = result.get("locked_until")
    messages = {
        ApprovalOutcome.UNKNOWN_CODE.value: f"no pending code {code!r} on {channel}",
        ApprovalOutcome.EXPIRED.value: f"code {code!r} has expired; ask the user to write again "
        "for a new one",
        ApprovalOutcome.LOCKED_OUT.value: "too many wrong codes; approvals on this channel are "
        "locked until " + (_when(locked) if locked else "later"),
    }
    die(messages.get(outcome, str(outcome or result.get("error"))), EX_USAGE)


def pairing_deny(loaded: LoadedConfig, channel: str, code: str, url: str | None = None) -> int:
    from chatgate.state import admin

    result = _ask(
        loaded,
        "/api/pairing/deny",
        lambda state: admin.pairing_deny(state, channel, code),
        method="POST",
        body={"channel": channel, "code": code},
        url=url,
    )
    if not result.get("found"):
        die(f"no pending code {code!r} on {channel}", EX_USAGE)
    print(f"denied code {code} on {channel}")
    return 0


def pairing_revoke(
    loaded: LoadedConfig, channel: str, sender_id: str, url: str | None = None
) -> int:
    from chatgate.state import admin

    result = _ask(
        loaded,
        "/api/pairing/revoke",
        lambda state: admin.pairing_revoke(state, channel, sender_id),
        method="POST",
        body={"channel": channel, "sender_id": sender_id},
        url=url,
    )
    if not result.get("found"):
        die(f"{channel} user {sender_id} is not approved", EX_USAGE)
    print(f"revoked {channel} user {sender_id}")
    return 0


# -- sessions -------------------------------------------------------------------------------


def sessions_list(loaded: LoadedConfig, *, as_json: bool, url: str | None = None) -> int:
    from chatgate.state import admin

    rows = _ask(loaded, "/api/sessions", admin.sessions_list, url=url)["sessions"]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        print(
            f"{r['key']}  epoch={r['epoch']}  messages={r['message_count']}"
            f"  updated {_when(r['updated_at'])}"
        )
    if not rows:
        print("no sessions yet")
    return 0


def sessions_show(loaded: LoadedConfig, key: str, url: str | None = None) -> int:
    from chatgate.state import admin

    result = _ask(
        loaded,
        "/api/sessions/show?" + urlencode({"key": key}),
        lambda state: admin.session_show(state, key),
        url=url,
    )
    if not result.get("found"):
        die(f"no session {key!r}", EX_USAGE)
    for m in result["messages"]:
        who = m["role"] + (f" ({m['name']})" if m["name"] else "")
        who += f" [human: {m['human']}]" if m.get("human") else ""
        print(f"[{_when(m['at'])}] {who}: {m['content']}")
    return 0


def sessions_reset(loaded: LoadedConfig, key: str, url: str | None = None) -> int:
    async def offline(state: Any) -> dict[str, Any]:
        return {"key": key, "epoch": await state.sessions.reset(key, _now())}

    result = _ask(loaded, "/api/sessions/reset", offline, method="POST", body={"key": key}, url=url)
    print(f"session {key}: started over (epoch {result['epoch']})")
    return 0


# -- why ------------------------------------------------------------------------------------


def why(
    loaded: LoadedConfig,
    channel: str,
    message_id: str | None,
    user: str | None,
    *,
    as_json: bool,
    url: str | None = None,
) -> int:
    """The decision trail of one message, or of a user's recent messages."""
    from chatgate.state import admin

    if message_id is None and user is None:
        die("give a MESSAGE_ID or --user ID", EX_USAGE)
    query = {"channel": channel, **({"message_id": message_id} if message_id else {})}
    if user is not None:
        query["user"] = user
    trails = _ask(
        loaded,
        "/api/why?" + urlencode(query),
        lambda state: admin.why(state, channel, message_id, user),
        url=url,
    )["trails"]
    if as_json:
        print(json.dumps(trails, indent=2))
        return 0
    if not trails:
        print("no such message in the journal (it may be older than the dedupe window)")
        return 1
    for t in trails:
        print(f"{t['key']} at {_when(t['received_at'])}: {t['summary']}")
        if t.get("trace_id"):
            print(f"  trace {t['trace_id']}")
        for tool_call in (t.get("tools") or {}).get("trail") or []:
            print("  " + tool_line(tool_call))
        for reply in t.get("human_replies") or []:
            print(f"  human ({reply['by']}) at {_when(reply['at'])}: {reply['text']}")
    return 0


def tool_line(call: Mapping[str, Any]) -> str:
    """One journaled tool call: step, name, masked arguments, status, duration, result size."""
    args = json.dumps(call.get("arguments"), ensure_ascii=False)
    if len(args) > 200:
        args = args[:199] + "…"
    line = (
        f"step {call.get('step')}: {call.get('tool')}({args}) → {call.get('status')} in "
        f"{call.get('duration_ms')} ms, {call.get('result_chars')} chars"
    )
    if call.get("approval"):  # a call that was asked in the chat first
        by = f" by {call['approver']}" if call.get("approver") else ""
        line += f"; {call['approval']}{by}"
    return line + (f" ({call['detail']})" if call.get("detail") else "")
