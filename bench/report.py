"""bench/results/latest.json and the markdown table printed on stdout."""

from __future__ import annotations

import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from bench import configs
from bench.stats import fmt
from chatgate.gateway.process.event_loop import loop_factory

RESULTS = Path(__file__).resolve().parent / "results"
RESULTS_MD = Path(__file__).resolve().parent / "RESULTS.md"
SCHEMA = 1
# The SDKs both sides run on; their versions move the floor as much as ours.
SDKS = (
    "python-telegram-bot",
    "litellm",
    "openai",
    "aiohttp",
    "httpx",
    "slack-bolt",
    "slack-sdk",
    "discord.py",
    "redis",
    "uvloop",
)


def document(
    scenarios: dict[str, dict[str, Any]],
    *,
    quick: bool,
    reps: int,
    started_at: str,
    duration_s: float,
) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "started_at": started_at,
        "duration_s": round(duration_s, 1),
        "quick": quick,
        "reps": reps,
        "host": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu": _cpu_model(),
            "sdks": _sdk_versions(),
            "event_loop": _event_loop(),
            "executable": sys.executable,
            "load_avg_1m_at_end": round(os.getloadavg()[0], 2),  # other work on the machine
        },
        "scenarios": {name: _with_ratios(result) for name, result in scenarios.items()},
    }


def _event_loop() -> str:
    """The loop the chatgate daemons ran on, as resolved from their gateway.event_loop."""
    return "uvloop" if loop_factory(configs.EVENT_LOOP) is not None else "asyncio"


def _cpu_model() -> str:
    """The CPU's model name (Linux), else the architecture."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def _sdk_versions() -> dict[str, str]:
    versions = {}
    for name in SDKS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def _with_ratios(result: dict[str, Any]) -> dict[str, Any]:
    """Add ``ratios``: ``<metric>_ratio`` = chatgate median / floor median, for quick reading."""
    metrics = result.get("metrics")
    if not metrics:
        return result
    ratios = {
        f"{name}_ratio": metric["ratio"]
        for name, metric in metrics.items()
        if metric.get("floor") is not None
    }
    return {**result, "ratios": ratios}


def write(doc: dict[str, Any], path: Path | None = None) -> Path:
    """Write the JSON; the default location also gets bench/RESULTS.md (the table)."""
    target = path or RESULTS / "latest.json"
    _write_text(target, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    if path is None:
        _write_text(RESULTS_MD, results_markdown(doc))
    return target


def _write_text(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)


def results_markdown(doc: dict[str, Any]) -> str:
    """bench/RESULTS.md: when and where it ran, then the table."""
    host = doc["host"]
    load = host.get("load_avg_1m_at_end")
    busy = f"; 1-minute load average at the end: {load}" if load is not None else ""
    cpu = f" ({host['cpu']})" if host.get("cpu") else ""
    sdks = ", ".join(f"{name} {version}" for name, version in host.get("sdks", {}).items())
    head = [
        "# chatgate benchmark results",
        "",
        f"`make bench` at {doc['started_at']} on {host['cpus']} CPUs{cpu}, Python"
        f" {host['python']} ({host['platform']}){busy}. Compare ratios within a run, not numbers"
        " across runs; how to read the table: bench/README.md.",
        "",
        *([f"SDKs: {sdks}.", ""] if sdks else []),
        *(
            [f"chatgate's event loop: {host['event_loop']}; the floors run on asyncio's.", ""]
            if host.get("event_loop")
            else []
        ),
        "",
    ]
    return "\n".join(head) + markdown(doc) + "\n"


def _spread(summary: dict[str, Any] | None, reps: int) -> str:
    if summary is None:
        return ""
    text = fmt(summary["median"])
    if reps > 1 and summary["min"] is not None:
        text += f" ({fmt(summary['min'])}–{fmt(summary['max'])})"
    return text


def _verdict(meets: bool | None) -> str:
    return {True: "ok", False: "MISS", None: ""}[meets]


def markdown(doc: dict[str, Any]) -> str:
    """One row per metric: medians with (min–max), the ratio to the floor and the target."""
    reps = int(doc["reps"])
    lines = [
        "| scenario | metric | unit | chatgate | floor | ×floor | target | |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for name, result in doc["scenarios"].items():
        if "error" in result:
            lines.append(f"| {name} | **failed**: {_one_line(result['error'])} | | | | | | |")
            continue
        for metric in result["metrics"].values():
            ratio = metric["ratio"]
            lines.append(
                "| "
                + " | ".join(
                    [
                        name,
                        metric["label"],
                        metric["unit"],
                        _spread(metric["chatgate"], reps),
                        _spread(metric["floor"], reps),
                        f"{ratio:.2f}" if ratio is not None else "",
                        _target(metric),
                        _verdict(metric["meets_target"]),
                    ]
                )
                + " |"
            )
    mode = "quick" if doc["quick"] else "full"
    lines.append("")
    lines.append(
        f"{mode} run, {reps} repetition(s), {doc['duration_s']} s; medians (min–max); "
        "×floor = chatgate / floor (read with the metric's direction)."
    )
    return "\n".join(lines)


def _target(metric: dict[str, Any]) -> str:
    target = metric["target"]
    if target is None:
        return ""
    sign = "≥" if metric["better"] == "higher" else "≤"
    return f"{sign} {fmt(target)}"


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else "error"
    return first.replace("|", "/")[:160]
