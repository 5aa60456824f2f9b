"""How `chatgate config history` and `chatgate config rollback N` print their answers (the
actions themselves are declared in chatgate/config_edit/actions.py and run by the daemon)."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
from typing import Any

from chatgate.cli.api_client import DaemonUnreachable, request
from chatgate.cli.common import EX_UNAVAILABLE, die
from chatgate.config.errors import EX_CONFIG
from chatgate.config.loader import LoadedConfig
from chatgate.operator.actions import AnyAction
from chatgate.operator.parse import from_namespace, to_request

EX_REFUSED = 1  # the daemon answered and refused the change (the reason is printed)


def _when(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def reload_text(report: dict[str, Any]) -> str:
    if not report:
        return "not reloaded"
    if report.get("not_running"):
        return "chatgate is not running; it reads the file when it starts"
    if report.get("unchanged"):
        return "nothing to reload"
    parts = []
    for key, label in (
        ("restarted_channels", "restarted"),
        ("reconfigured_channels", "reconfigured"),
        ("needs_process_restart", "needs a process restart"),
    ):
        if report.get(key):
            parts.append(f"{label}: {', '.join(report[key])}")
    return "; ".join(parts) or "applied live"


def history(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    changes = answer["changes"]
    if as_json:
        print(json.dumps(changes, indent=2))
        return 0
    if not changes:
        print("no config changes made or tried from the dashboard, the API or the CLI yet")
        return 0
    for c in changes:
        head = f"#{c['id']}  {_when(c['at'])}  {c['action']}  {c['by']} · {c['address']}"
        if c.get("refused"):
            print(f"{head}  refused: {c['refused']}")
            print(f"      keys: {', '.join(c['changed']) or '(none)'}")
            continue
        lines = f"+{c['added_lines']} -{c['removed_lines']}"
        kept = f"  kept {c['backup']}" if c["backup"] else ""
        print(f"{head}  {lines}{kept}")
        print(f"      keys: {', '.join(c['changed']) or '(none)'}")
        print(f"      reload: {reload_text(c['reload'])}")
    return 0


def rollback(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if not answer.get("ok"):
        issues = "".join(f"\n  - {i['text']}" for i in answer.get("issues", ()))
        hint = f"\n{answer['hint']}" if answer.get("hint") else ""
        code = EX_CONFIG if answer.get("reason_code") == "config_invalid" else EX_REFUSED
        die(
            f"not rolled back ({answer.get('reason_code')}): {answer.get('error')}{issues}{hint}",
            code,
        )
    if answer.get("unchanged"):
        print(f"the file already is version {args.number}; nothing changed")
        return 0
    print(f"put back version {args.number}; the replaced file is kept as {answer['backup']}")
    print(f"reload: {reload_text(answer.get('reload') or {})}")
    return 0


NOT_RUNNING = {"ok": True, "not_running": True}  # the reload report when no daemon runs


def run_rollback(loaded: LoadedConfig, action: AnyAction, ns: argparse.Namespace) -> int:
    """Ask the daemon to roll back; when none answers (and no --url named one), put the kept
    version back here (validated, written and audited the same way): the daemon reads it when
    it starts."""
    args = from_namespace(action, ns)
    method, path, body = to_request(action, args)
    try:
        answer = request(loaded, path, method=method, body=body, url=ns.url)
    except DaemonUnreachable as exc:
        if ns.url is not None:
            die(f"chatgate is not running ({exc})", EX_UNAVAILABLE)
        answer = asyncio.run(_offline(loaded, args.number))
    return rollback(args, answer, False)


async def _offline(loaded: LoadedConfig, number: int) -> dict[str, Any]:
    from chatgate.channels.registry import ChannelRegistry
    from chatgate.clock import SystemClock
    from chatgate.config_edit.service import ConfigEditor, Refused
    from chatgate.gateway.features import ConfigPort
    from chatgate.gateway.process.state_lock import StateDirInUse, StateLock
    from chatgate.state.factory import build_state

    async def not_running() -> dict[str, Any]:
        return dict(NOT_RUNNING)

    loaded.state_dir.mkdir(parents=True, exist_ok=True)
    lock = StateLock(loaded.state_dir)
    try:
        lock.acquire()
    except StateDirInUse as exc:
        die(
            f"{exc}; its API does not answer, so the config cannot be rolled back now",
            EX_UNAVAILABLE,
        )
    try:
        clock = SystemClock()
        state = build_state(loaded.config.gateway, loaded.state_dir, clock)
        await state.open()
        try:
            port = ConfigPort(ChannelRegistry(), os.environ)
            port.bind(not_running)
            editor = ConfigEditor(_Fixed(loaded), state, clock, port)
            try:
                return await editor.rollback(number, address="local", by="cli")
            except Refused as refused:
                return refused.to_json()
        finally:
            await state.close()
    finally:
        lock.release()


class _Fixed:
    """The loaded config, as the live one (no reloads without a daemon)."""

    def __init__(self, loaded: LoadedConfig) -> None:
        self.loaded = loaded
