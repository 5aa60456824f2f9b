"""`chatgate jobs list|show|history|add|rm|pause|resume|run`: scheduled jobs of the running
daemon, through its /api/jobs (jobs need the daemon: it owns the scheduler)."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from chatgate.config.loader import LoadedConfig

EX_USAGE, EX_DATAERR = 64, 65


def add_parser(sub: Any, config: argparse.ArgumentParser, api: argparse.ArgumentParser) -> None:
    from chatgate.cli.api_args import api_actions

    what = "scheduled jobs (cron, interval, one-shot)"
    actions, parents = api_actions(sub, "jobs", what, config, api)
    actions.add_parser("list", parents=parents, help="jobs, next run, last outcome")
    for name, what in (("show", "one job and its last runs"), ("history", "a job's runs")):
        p = actions.add_parser(name, parents=parents, help=what)
        p.add_argument("id")
        p.add_argument("--limit", type=int, default=20)
    add = actions.add_parser("add", parents=parents, help="create a runtime job")
    add.add_argument("id")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", help="cron expression, e.g. '0 9 * * 1-5'")
    when.add_argument("--every", type=float, metavar="SECONDS", help="interval in seconds")
    when.add_argument("--at", help="one-shot ISO time with offset, e.g. 2026-12-24T09:00+01:00")
    add.add_argument("--tz", default="UTC", help="time zone of --cron (default UTC)")
    add.add_argument("--prompt", required=True, help="what the agent is asked at each run")
    add.add_argument("--to", action="append", required=True, help="channel:chat_id[:thread]")
    add.add_argument("--agent", default="default")
    add.add_argument("--session", choices=["job", "chat", "none"], default="job")
    add.add_argument("--misfire", choices=["skip", "run_once", "run_all"], default="run_once")
    for name, aliases, what in (
        ("rm", ["remove"], "remove a runtime job"),
        ("pause", [], "stop running a job"),
        ("resume", [], "run a paused job again"),
        ("run", ["run-now"], "run a job now, outside its schedule"),
    ):
        p = actions.add_parser(name, aliases=aliases, parents=parents, help=what)
        p.add_argument("id")


def run(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    from chatgate.cli.api_client import call

    action = {"remove": "rm", "run-now": "run"}.get(args.action, args.action)
    url = args.url
    if action == "list":
        answer = call(loaded, "/api/jobs", url=url)
        return _out(answer, args.json, lambda: _table(answer["jobs"]))
    path = "/api/jobs/" + quote(args.id, safe="") if action != "add" else "/api/jobs"
    if action in ("show", "history"):
        answer = call(loaded, f"{path}/history?limit={max(1, args.limit)}", url=url)
        return _out(answer, args.json, lambda: _history(answer))
    if action == "add":
        answer = call(loaded, path, method="POST", body=_body(args), url=url)
        return _out(answer, args.json, lambda: _table([answer["job"]]))
    if action == "rm":
        answer = call(loaded, path, method="DELETE", url=url)
        return _out(answer, args.json, lambda: print(f"removed job {args.id}"))
    answer = call(loaded, f"{path}/{action}", method="POST", url=url)
    if action == "run":
        return _out(answer, args.json, lambda: _history({"job": None, "history": [answer["run"]]}))
    return _out(answer, args.json, lambda: _table([answer["job"]]))


def _body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": args.id,
        "prompt": args.prompt,
        "deliver": {"to": args.to},
        "agent": args.agent,
        "session": args.session,
        "misfire": args.misfire,
    }
    if args.cron is not None:
        body.update(cron=args.cron, tz=args.tz)
    elif args.every is not None:
        body["every_s"] = args.every
    else:
        body["at"] = args.at
    return body


def _out(answer: dict[str, Any], as_json: bool, render: Callable[[], None]) -> int:
    from chatgate.cli.api_client import show

    return show(answer, as_json, render, _error_code)


def _error_code(answer: dict[str, Any]) -> int:
    """A request the daemon refused is a usage error; anything else, bad data."""
    return EX_USAGE if answer.get("http_status", 400) in (400, 409) else EX_DATAERR


def _when(epoch: float | None) -> str:
    """An instant in this machine's zone, to the second, with its UTC offset."""
    if epoch is None:
        return "-"
    try:
        moment = dt.datetime.fromtimestamp(float(epoch)).astimezone()
    except (OverflowError, ValueError, OSError, TypeError):
        return str(epoch)
    return moment.isoformat(sep=" ", timespec="seconds")


def _outcome(line: dict[str, Any] | None) -> str:
    if not line:
        return "never ran"
    runs = line.get("runs") or []
    outcomes = ",".join(sorted({str(r.get("outcome")) for r in runs})) or "-"
    count = f" x{line['count']}" if line.get("count", 1) > 1 else ""
    return f"{_when(line['instant'])} {line['reason']}{count} → {outcomes}"


def job_lines(jobs: list[dict[str, Any]]) -> list[str]:
    """Two lines per job (plus its problems): state, schedule, targets; next and last run."""
    lines = []
    for job in jobs:
        targets = ", ".join(job["deliver"])
        lines.append(f"{job['id']}  [{job['state']}]  {job['schedule']}  → {targets}")
        lines.append(f"    next: {_when(job['next_at'])}   last: {_outcome(job['last'])}")
        lines += [f"    ! {problem}" for problem in job.get("problems", [])]
    return lines


def _table(jobs: list[dict[str, Any]]) -> None:
    print("\n".join(job_lines(jobs)) if jobs else "no jobs")


def _history(answer: dict[str, Any]) -> None:
    if answer.get("job"):
        _table([answer["job"]])
    for line in answer.get("history", []):
        print(f"  {_outcome(line)}  ({line.get('replica', '')})")
        for run in line.get("runs", []):
            ids = ",".join(run.get("delivery_ids") or []) or "-"
            print(f"      {run['key']}: {run.get('outcome')} ids={ids} reason={run.get('reason')}")
