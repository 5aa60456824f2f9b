"""`python -m bench.profile`: the pipeline scenario under cProfile, hot spots as shares of time.

Runs the in-process pipeline (real Gateway, echo agent, SQLite) once to warm up, then once under
cProfile, and prints the functions with the largest cumulative and own time as a share of the
profiled total. Only the event-loop thread is profiled: time spent waiting for the SQLite thread
shows up in ``select``/``epoll.poll``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
from pathlib import Path

from bench.scenarios.pipeline import Load, _chatgate, on_daemon_loop

_PREFIXES = (
    (str(Path(__file__).resolve().parent.parent) + "/", ""),
    (str(Path(sys.prefix)) + "/lib/python3.11/site-packages/", ""),
    (str(Path(sys.base_prefix)) + "/lib/python3.11/", "stdlib:"),
)


def short(path: str) -> str:
    for prefix, replacement in _PREFIXES:
        if path.startswith(prefix):
            return replacement + path[len(prefix) :]
    return path


def hot_spots(stats: pstats.Stats, top: int, only: str) -> list[str]:
    """Lines "cum% own% calls file:line(function)", by cumulative then by own time."""
    total = getattr(stats, "total_tt", 0.0) or 1.0
    rows: list[tuple[float, float, int, str]] = []
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, object]]
    raw = stats.stats  # type: ignore[attr-defined]
    for (path, line, name), (_, calls, own, cum, _) in raw.items():
        where = f"{short(path)}:{line}({name})"
        if only and only not in where:
            continue
        rows.append((cum, own, calls, where))
    lines = ["  cum%   own%    calls  function"]
    for label, key in (("cumulative", 0), ("own", 1)):
        lines.append(f"-- by {label} time")
        for cum, own, calls, where in sorted(rows, key=lambda r: -float(r[key]))[:top]:
            lines.append(f"{cum / total:6.1%} {own / total:6.1%} {calls:8d}  {where}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--only", default="chatgate/", help="keep functions whose path has this")
    parser.add_argument("--out", type=Path, default=None, help="also dump raw pstats here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="chatgate-profile-") as scratch:
        work = Path(scratch)
        on_daemon_loop(_chatgate, work / "warm", Load(args.sessions, 200))
        profiler = cProfile.Profile()
        profiler.enable()
        run = on_daemon_loop(_chatgate, work / "run", Load(args.sessions, args.turns))
        profiler.disable()
    stats = pstats.Stats(profiler)
    if args.out is not None:
        stats.dump_stats(str(args.out))
    print(f"{args.turns} turns over {args.sessions} session(s): {run.turns_per_s:,.0f} turns/s")
    print("\n".join(hot_spots(stats, args.top, args.only)))


if __name__ == "__main__":
    main()
