"""Commands over the gateway's state: dlq, pairing, sessions, why — one runner for every
operator action the CLI offers, and a renderer per action.

Each asks the running daemon's /api; when no daemon answers (and the action can do without),
it opens the configured store itself (holding the state-dir lock, so no daemon starts meanwhile)
and runs the same handler with a `StateContext`. Either way the answer is the same JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
from collections.abc import Callable, Mapping
from typing import Any

from chatgate.cli import config_edit_cmd
from chatgate.cli.api_client import DaemonUnreachable, call, not_running, request
from chatgate.cli.common import EX_UNAVAILABLE, EX_USAGE, die
from chatgate.config.loader import LoadedConfig
from chatgate.operator.actions import AnyAction
from chatgate.operator.parse import from_namespace, to_request
from chatgate.policies.pairing import ApprovalOutcome

Render = Callable[[Any, dict[str, Any], bool], int]


def _when(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def run_action(loaded: LoadedConfig, action: AnyAction, ns: argparse.Namespace) -> int:
    """Run ``action`` with the command line's arguments and print its answer."""
    args = from_namespace(action, ns)
    problem = getattr(args, "problem", None)
    if problem is not None and problem() is not None:
        die(problem(), EX_USAGE)
    if action.route.download:
        try:
            return DOWNLOADS[action.name](loaded, action, args, ns.url)
        except DaemonUnreachable as exc:
            not_running(loaded, exc)
    answer = ask(loaded, action, args, ns.url)
    render = RENDERERS.get(action.name, as_json_only)
    return render(args, answer, bool(getattr(ns, "json", False)))


def ask(loaded: LoadedConfig, action: AnyAction, args: Any, url: str | None) -> dict[str, Any]:
    """The daemon's answer; without a daemon, the same handler over the store itself (unless
    the action needs the daemon or the operator named one with --url)."""
    method, path, body = to_request(action, args)
    assert action.command is not None
    if not action.command.offline:
        timeout_s = action.command.timeout_s
        return call(loaded, path, method=method, body=body, url=url, timeout_s=timeout_s)
    try:
        return request(loaded, path, method=method, body=body, url=url)
    except DaemonUnreachable as exc:
        if url is not None:  # the operator named a daemon: do not silently use local state
            die(f"chatgate is not running ({exc})", EX_UNAVAILABLE)
    return asyncio.run(_offline(loaded, action, args))


async def _offline(loaded: LoadedConfig, action: AnyAction, args: Any) -> dict[str, Any]:
    from chatgate.clock import SystemClock
    from chatgate.gateway.process.state_lock import StateDirInUse, StateLock
    from chatgate.operator.context import StateContext
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
            result = await action.handler(StateContext(state), args)
            answer: dict[str, Any] = result.to_json()
            return answer
        finally:
            await state.close()
    finally:
        lock.release()


def _print_json(value: Any) -> int:
    print(json.dumps(value, indent=2))
    return 0


def as_json_only(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    """An action without a renderer of its own (a feature's) prints its answer as JSON."""
    if "error" in answer:
        die(str(answer["error"]), EX_USAGE)
    print(json.dumps(answer, indent=2, sort_keys=True))
    return 0


# -- dlq ------------------------------------------------------------------------------------


def dlq_list(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    entries = answer["entries"]
    if as_json:
        return _print_json(entries)
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


def dlq_drop(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if not answer.get("found"):
        die(f"no DLQ entry #{args.id}", EX_USAGE)
    print(f"dropped DLQ entry #{args.id}")
    return 0


def dlq_replay(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if not answer.get("found"):
        die(f"no DLQ entry #{args.id}", EX_USAGE)
    status = answer.get("status")
    kind = f" ({answer['kind']})" if answer.get("kind") else ""
    print(f"DLQ entry #{args.id}: {status}{kind}")
    if answer.get("hint"):
        print(answer["hint"])
    return 0 if status == "sent" else EX_UNAVAILABLE


# -- pairing --------------------------------------------------------------------------------


def pairing_list(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if as_json:
        return _print_json(answer)
    print("pending:")
    for p in answer["pending"]:
        print(
            f"  {p['channel']:<10} {p['code']}  {p['sender_id']} {p['sender_name']!r}"
            f"  requested {_when(p['issued_at'])}"
        )
    if not answer["pending"]:
        print("  (none)")
    print("approved:")
    for a in answer["approved"]:
        print(
            f"  {a['channel']:<10} {a['sender_id']} {a['sender_name']!r}"
            f"  since {_when(a['approved_at'])}"
        )
    if not answer["approved"]:
        print("  (none)")
    return 0


def pairing_approve(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    channel, code = args.channel, args.code
    if answer.get("approved"):
        print(f"approved {channel} user {answer['sender_id']}; they are notified and can write now")
        return 0
    outcome = answer.get("outcome", "")
    locked = answer.get("locked_until")
    messages = {
        ApprovalOutcome.UNKNOWN_CODE.value: f"no pending code {code!r} on {channel}",
        ApprovalOutcome.EXPIRED.value: f"code {code!r} has expired; ask the user to write again "
        "for a new one",
        ApprovalOutcome.LOCKED_OUT.value: "too many wrong codes; approvals on this channel are "
        "locked until " + (_when(locked) if locked else "later"),
    }
    die(messages.get(outcome, str(outcome or answer.get("error"))), EX_USAGE)


def pairing_deny(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if not answer.get("found"):
        die(f"no pending code {args.code!r} on {args.channel}", EX_USAGE)
    print(f"denied code {args.code} on {args.channel}")
    return 0


def pairing_revoke(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if not answer.get("found"):
        die(f"{args.channel} user {args.sender_id} is not approved", EX_USAGE)
    print(f"revoked {args.channel} user {args.sender_id}")
    return 0


# -- sessions -------------------------------------------------------------------------------


def sessions_list(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    rows = answer["sessions"]
    if as_json:
        return _print_json(rows)
    for r in rows:
        print(
            f"{r['key']}  epoch={r['epoch']}  messages={r['message_count']}"
            f"  updated {_when(r['updated_at'])}"
        )
    if not rows:
        print("no sessions yet")
    return 0


def session_show(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if not answer.get("found"):
        die(f"no session {args.key!r}", EX_USAGE)
    for m in answer["messages"]:
        who = m["role"] + (f" ({m['name']})" if m["name"] else "")
        who += f" [human: {m['human']}]" if m.get("human") else ""
        print(f"[{_when(m['at'])}] {who}: {m['content']}")
    return 0


def session_reset(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    print(f"session {args.key}: started over (epoch {answer['epoch']})")
    return 0


# -- why ------------------------------------------------------------------------------------


def why(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    """The decision trail of one message, or of a user's recent messages."""
    trails = answer["trails"]
    if as_json:
        return _print_json(trails)
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
    if call.get("taint"):  # a write tool asked for because untrusted content was in context
        line += f"; tainted by {', '.join(call['taint'])}"
    return line + (f" ({call['detail']})" if call.get("detail") else "")


def usage(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    """`chatgate usage`: one line per counter (or scope id), biggest spend first."""
    if as_json or "error" in answer:
        return as_json_only(args, answer, as_json)
    rows = answer["rows"]
    for r in rows:
        name = r["rule"] or r["scope"] or ""
        print(
            f"  {name:<20} {r['id']:<28} {r['period_start']}  ${r['usd']:.6f}"
            f"  {r['tokens']} tokens  {r['turns']} turns"
        )
    if not rows:
        print("  (no budget counters)")
    return 0


RENDERERS: dict[str, Render] = {
    "config_history": config_edit_cmd.history,
    "config_rollback": config_edit_cmd.rollback,
    "usage": usage,
    "dlq_list": dlq_list,
    "dlq_drop": dlq_drop,
    "dlq_replay": dlq_replay,
    "pairing_list": pairing_list,
    "pairing_approve": pairing_approve,
    "pairing_deny": pairing_deny,
    "pairing_revoke": pairing_revoke,
    "sessions_list": sessions_list,
    "session_show": session_show,
    "session_reset": session_reset,
    "why": why,
}

from chatgate.cli.people_cmd import DOWNLOADS  # noqa: E402
from chatgate.cli.people_cmd import RENDERERS as _PEOPLE  # noqa: E402  (after the built-in ones)

RENDERERS.update(_PEOPLE)
