"""How `chatgate people` prints its answers; `export` streams the archive into a 0600 file."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

from chatgate.cli.api_client import download
from chatgate.cli.common import EX_USAGE, die
from chatgate.config.loader import LoadedConfig
from chatgate.operator.actions import AnyAction
from chatgate.operator.parse import to_request

EX_CANTCREAT = 73  # sysexits: an output file cannot be created


def _counts(answer: dict[str, Any]) -> str:
    stores = answer.get("stores") or {}
    return (
        ", ".join(f"{name} {info['count']}" for name, info in sorted(stores.items())) or "nothing"
    )


def show(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if "error" in answer:
        die(str(answer["error"]), EX_USAGE)
    if as_json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
        return 0
    footprint = answer["footprint"]
    print(f"{footprint['person']}: {footprint['messages']} messages in the journal")
    for session in footprint["sessions"]:
        whole = " (theirs alone)" if session in footprint["own_sessions"] else ""
        print(f"  session {session}{whole}")
    for name, info in sorted(answer["stores"].items()):
        print(f"{name}: {info['count']}")
        for record in info.get("records", []):
            print("  " + json.dumps(record, ensure_ascii=False, default=str)[:300])
        for file in info.get("files", []):
            print(f"  file {file}")
    return 0


def default_name(person: str, now: float) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", person)
    stamp = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"chatgate-person-{safe}-{stamp}.tar.gz"


def export(loaded: LoadedConfig, action: AnyAction, args: Any, url: str | None) -> int:
    """Stream the archive into a new 0600 file; it is removed when the export fails."""
    out = Path(args.out or default_name(args.person, dt.datetime.now(dt.UTC).timestamp()))
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        die(f"{out} exists; give another --out", EX_CANTCREAT)
    except OSError as exc:
        die(f"cannot write {out}: {exc.strerror}", EX_CANTCREAT)
    method, path, body = to_request(action, args)
    assert action.command is not None
    try:
        with os.fdopen(fd, "wb") as file:
            answer = download(
                loaded, path, file, method=method, body=body, url=url,
                timeout_s=action.command.timeout_s,
            )  # fmt: skip
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    if "error" in answer:
        out.unlink(missing_ok=True)
        die(str(answer["error"]), EX_USAGE)
    print(f"wrote {out} ({answer['bytes']} bytes): {_counts(answer)}")
    return 0


def erase(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if "error" in answer:
        die(str(answer["error"]), EX_USAGE)
    if as_json:
        print(json.dumps(answer, indent=2))
        return 0
    print(f"erased {answer['footprint']['person']}:")
    for e in answer["erased"]:
        kept = f", {e['tombstones']} tombstones kept for dedupe" if e["tombstones"] else ""
        print(f"  {e['store']}: {e['removed']} removed{kept}")
    return 0


def audit(args: Any, answer: dict[str, Any], as_json: bool) -> int:
    if as_json:
        print(json.dumps(answer["records"], indent=2))
        return 0
    for r in answer["records"]:
        when = dt.datetime.fromtimestamp(r["at"]).strftime("%Y-%m-%d %H:%M:%S")
        counts = ", ".join(f"{k} {v}" for k, v in sorted(r["counts"].items()))
        print(f"{when}  {r['action']:<9} {r['person']}  by {r['by']}  {counts}")
    if not answer["records"]:
        print("no privacy requests yet")
    return 0


RENDERERS = {"people_show": show, "people_erase": erase, "people_audit": audit}
DOWNLOADS = {"people_export": export}
