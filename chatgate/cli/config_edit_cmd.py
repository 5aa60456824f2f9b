"""How `chatgate config history` and `chatgate config rollback N` print their answers (the
actions themselves are declared in chatgate/config_edit/actions.py and run by the daemon)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from chatgate.cli.common import die
from chatgate.config.errors import EX_CONFIG

EX_REFUSED = 1  # the daemon answered and refused the change (the reason is printed)


def _when(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def reload_text(report: dict[str, Any]) -> str:
    if not report:
        return "not reloaded"
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
        print("no config changes made from the dashboard, the API or the CLI yet")
        return 0
    for c in changes:
        lines = f"+{c['added_lines']} -{c['removed_lines']}"
        kept = f"  kept {c['backup']}" if c["backup"] else ""
        print(
            f"#{c['id']}  {_when(c['at'])}  {c['action']}  {c['by']} · {c['address']}  {lines}{kept}"
        )
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
