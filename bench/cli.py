"""`python -m bench [--quick] [--only a,b] [--reps N]`: run, write latest.json, print the table."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import shutil
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import configs, report
from bench.procs import BenchError
from bench.runner import Context, Scenario, http_client
from bench.scenarios import (
    concurrency,
    discord,
    email,
    matrix,
    media,
    memory,
    pipeline,
    replicas,
    slack,
    startup,
    teams,
    telegram,
    telegram_tls,
    tools,
    turns_rss,
    uploads,
    webhook,
    whatsapp,
)

SCENARIOS: dict[str, Scenario] = {
    "pipeline": pipeline.scenario,
    "telegram": telegram.scenario,
    "telegram_tls_dms": telegram_tls.dms,
    "telegram_tls_slow_model": telegram_tls.slow_model,
    "discord": discord.scenario,
    "slack": slack.scenario,
    "whatsapp": whatsapp.scenario,
    "matrix": matrix.scenario,
    "email": email.scenario,
    "teams": teams.scenario,
    "webhook": webhook.scenario,
    "replicas": replicas.scenario,
    "concurrency": concurrency.scenario,
    "memory": memory.scenario,
    "startup": startup.scenario,
    "turns_rss": turns_rss.scenario,
    "tools": tools.scenario,
    "uploads": uploads.scenario,
    "media": media.scenario,
}
# concurrency and telegram share one litellm rig (daemon + floor), so they run back to back and the
# rig closes after the last of them; concurrency goes first because its bursts are small. The
# report keeps the SCENARIOS order.
EXECUTION_ORDER = (
    "pipeline",
    "concurrency",
    "telegram",
    "telegram_tls_dms",
    "telegram_tls_slow_model",
    "discord",
    "slack",
    "whatsapp",
    "matrix",
    "email",
    "teams",
    "webhook",
    "replicas",
    "memory",
    "startup",
    "turns_rss",
    "tools",
    "uploads",
    "media",
)
SHARED_RIG_USERS = frozenset({"telegram", "concurrency"})


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny counts, 1 repetition")
    parser.add_argument(
        "--only", default="", help="comma-separated scenarios: " + ",".join(SCENARIOS)
    )
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 3; quick 1)")
    parser.add_argument(
        "--dms",
        type=int,
        default=600,
        help="DMs per telegram burst, from 200 users (default 600)",
    )
    parser.add_argument(
        "--event-loop",
        choices=["auto", "uvloop", "asyncio"],
        default="auto",
        help="gateway.event_loop of the chatgate daemons (default auto, as shipped)",
    )
    parser.add_argument("--out", type=Path, default=None, help="JSON path (default latest.json)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory and logs")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.only.split(",") if s.strip()] or list(SCENARIOS)
    unknown = [s for s in chosen if s not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    args.selected = [s for s in EXECUTION_ORDER if s in chosen]
    args.reps = args.reps or (1 if args.quick else 3)
    if args.reps < 1 or args.reps > 20:
        parser.error("--reps must be between 1 and 20")
    if args.dms < 200 or args.dms > 10_000:
        parser.error("--dms must be between 200 and 10000")
    return args


async def run(args: argparse.Namespace, workdir: Path) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    async with http_client() as http, contextlib.AsyncExitStack() as shared:
        ctx = Context(args.quick, args.reps, workdir, http, shared, telegram_dms=args.dms)
        for index, name in enumerate(args.selected):
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            started = time.monotonic()
            try:
                outcome = await SCENARIOS[name](ctx)
            except (BenchError, RuntimeError, TimeoutError, OSError, AssertionError) as exc:
                detail = "".join(traceback.format_exception_only(exc)).strip()
                print(f"[bench] {name} FAILED: {detail}", file=sys.stderr, flush=True)
                results[name] = {
                    "error": detail,
                    "duration_s": round(time.monotonic() - started, 1),
                }
            else:
                results[name] = {
                    "params": outcome.params,
                    "metrics": outcome.table.to_json(),
                    "extra": outcome.extra,
                    "duration_s": round(time.monotonic() - started, 1),
                }
            took = time.monotonic() - started
            print(f"[bench] {name} done in {took:.1f} s", file=sys.stderr, flush=True)
            if not SHARED_RIG_USERS & set(args.selected[index + 1 :]):
                await shared.aclose()
                ctx.cache.pop("rig:llm", None)
    return {name: results[name] for name in SCENARIOS if name in results}


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    configs.EVENT_LOOP = args.event_loop
    # The in-process fakes log every client reset (e.g. when a subject shuts down) with a
    # traceback; lost or duplicated replies are counted by the scenarios instead.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    workdir = Path(tempfile.mkdtemp(prefix="chatgate-bench-"))
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    results = asyncio.run(run(args, workdir))
    failed = any("error" in r for r in results.values())
    doc = report.document(
        results,
        quick=args.quick,
        reps=args.reps,
        started_at=started_at,
        duration_s=time.monotonic() - started,
    )
    path = report.write(doc, args.out)
    print(report.markdown(doc))
    print(f"\nresults: {path}")
    if args.keep or failed:
        print(f"[bench] scratch and logs kept in {workdir}", file=sys.stderr)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0
