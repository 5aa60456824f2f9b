"""`python -m bench.tracing_instructions`: instructions per message with tracing off and on.

The load-independent companion of `bench.tracing_overhead`: the same in-process pipeline (real
Gateway, memory channel, SQLite; a model turn against the fake model in another process, an echo
turn) runs in one process under ``valgrind --tool=callgrind --instr-atstart=no``. For each run
the gateway starts and warms up uncounted; counting is switched on (``callgrind_control -i on``)
for ``--turns`` messages and, with tracing on, the flush of their spans over OTLP/HTTP (the
export thread's work, to a sink in another process); then off and dumped. Every thread of the
process is counted. Runs alternate off and on, ``--reps`` times each. The periodic exports are
kept out of the window unless ``--periodic`` (see QUIET). Needs valgrind.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.budget_overhead import fake_model
from bench.tracing_overhead import sink, warmed_gateway
from chatgate.telemetry.feature import Telemetry

ROOT = Path(__file__).resolve().parent.parent
# Work that runs every so many seconds, not per message (the GenAI metrics' export every minute,
# the span processor's drain every 5 s): under callgrind a message takes ~50x longer, so it would
# land in the window ~50x more often per message than it does at full speed. Deferred past the
# window, the spans of the window go in one request at its end, as a busy gateway batches them.
QUIET = {"OTEL_METRIC_EXPORT_INTERVAL": "3600000", "OTEL_BSP_SCHEDULE_DELAY": "3600000"}


async def _run(
    workdir: Path, turns: int, endpoint: str | None, model: str | None, env: dict[str, str]
) -> None:
    """One counted run: warm up, ask for counting, ``turns`` messages and the span flush."""
    loop = asyncio.get_running_loop()
    async with warmed_gateway(workdir, endpoint, model, env) as (gateway, channel):
        telemetry = next(f for f in gateway.features if isinstance(f, Telemetry))
        await asyncio.to_thread(telemetry.flush)
        gc.collect()  # each window starts with no garbage left over: its collections recur
        print("ready", flush=True)
        await loop.run_in_executor(None, sys.stdin.readline)  # counting is on
        for i in range(turns):
            result = await (await channel.inject(f"t{i}", chat_id=f"c{i % 10}")).result
            assert result.reason == "text", result
        await asyncio.to_thread(telemetry.flush)
        print("done", flush=True)
        await loop.run_in_executor(None, sys.stdin.readline)  # counting is off


def child(plan: list[dict[str, Any]], turns: int, scratch: Path) -> None:
    for n, step in enumerate(plan):
        run = _run(scratch / f"run{n}", turns, step["endpoint"], step["model"], step["env"])
        asyncio.run(run)


def _control(pid: int, *args: str) -> None:
    subprocess.run(
        ["callgrind_control", *args, str(pid)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _totals(path: Path) -> int:
    for line in path.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def measure(
    kinds: list[str],
    turns: int,
    reps: int,
    scratch: Path,
    variants: dict[str, dict[str, str]],
    periodic: bool = False,
) -> dict[tuple[str, str], list[float]]:
    """Instructions per message by (kind, side), one figure per rep; the sides are off, on and
    each of ``variants`` (on, with that environment)."""
    sides: dict[str, dict[str, str] | None] = {"off": None, "on": {}} | dict(variants)
    if not periodic:  # each side that exports keeps its periodic work out of the window
        sides = {side: None if env is None else QUIET | env for side, env in sides.items()}
    with sink() as url, fake_model() as model:
        plan = [
            {"kind": kind, "side": side, "endpoint": None if env is None else url}
            | {"model": model if kind == "model" else None, "env": env or {}}
            for _ in range(reps)
            for kind in kinds
            for side, env in sides.items()
        ]
        out = scratch / "callgrind.out"
        argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        argv += [f"--callgrind-out-file={out}", sys.executable, "-m", "bench.tracing_instructions"]
        argv += ["--child", json.dumps(plan), "--turns", str(turns), "--scratch", str(scratch)]
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            # the same dict layouts every run; QUIET for what reads the process environment
            env={**os.environ, "PYTHONHASHSEED": "0"} | ({} if periodic else QUIET),
        )
        assert proc.stdin is not None and proc.stdout is not None
        found: dict[tuple[str, str], list[float]] = {}
        for n, step in enumerate(plan, start=1):
            assert proc.stdout.readline().strip() == "ready", f"run {n} did not start"
            _control(proc.pid, "-z")
            _control(proc.pid, "-i", "on")
            proc.stdin.write("go\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "done", f"run {n} did not finish"
            _control(proc.pid, "-i", "off")
            _control(proc.pid, "-d")
            proc.stdin.write("next\n")
            proc.stdin.flush()
            count = _totals(Path(f"{out}.{n}")) / turns
            found.setdefault((str(step["kind"]), str(step["side"])), []).append(count)
            print(f"{step['kind']} {step['side']}: {count / 1e6:.3f} M", file=sys.stderr)
        proc.stdin.close()
        proc.wait()
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.tracing_instructions", description=__doc__
    )
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--agents", default="model,echo", help="which turns: model, echo or both")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="another side, on with environment: NAME:KEY=VALUE[,KEY=VALUE]",
    )
    parser.add_argument(
        "--periodic",
        action="store_true",
        help="keep the default metric export interval and span drain delay (see QUIET)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    parser.add_argument("--keep", action="store_true", help="keep the callgrind files")
    args = parser.parse_args(argv)
    if args.child:
        child(json.loads(args.child), args.turns, Path(args.scratch))
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    scratch = Path(tempfile.mkdtemp(prefix="chatgate-tracing-instr-"))
    try:
        variants = {
            name: dict(pair.split("=", 1) for pair in spec.split(",") if pair)
            for name, _, spec in (v.partition(":") for v in args.variant)
        }
        kinds = args.agents.split(",")
        found = measure(kinds, args.turns, args.reps, scratch, variants, args.periodic)
    finally:
        if args.keep:
            print(f"callgrind files in {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    for (kind, side), counts in found.items():
        off = statistics.mean(found[(kind, "off")])
        mean = statistics.mean(counts)
        each = ", ".join(f"{v / 1e6:.2f}" for v in counts)
        print(f"{kind} turn {side}: {mean / 1e6:.2f} M (mean of {each}), {mean / off:.3f}x off")


if __name__ == "__main__":
    main()
