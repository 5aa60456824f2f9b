"""`python -m bench --quick` runs every scenario end to end and writes a well-formed latest.json."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.daemon import ROOT, cli_env

SCENARIOS = ("pipeline", "telegram", "discord", "webhook", "concurrency", "memory", "startup")
BUDGET_S = 90.0  # seven scenarios, each starting its own daemon and floor


def _check_summary(summary: Any, where: str) -> None:
    assert set(summary) == {"samples", "median", "min", "max"}, where
    assert len(summary["samples"]) == 1, where
    assert isinstance(summary["median"], int | float), where
    assert summary["min"] <= summary["median"] <= summary["max"], where


@pytest.mark.slow
def test_quick_bench_writes_every_scenario(tmp_path: Path) -> None:
    out = tmp_path / "latest.json"
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the bench's daemons and floors share its process group
    )
    try:
        stdout, stderr = proc.communicate(timeout=BUDGET_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"python -m bench --quick took longer than {BUDGET_S:.0f} s")
    took = time.monotonic() - began
    assert proc.returncode == 0, stderr[-3000:]
    assert took < BUDGET_S

    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["quick"] is True and doc["reps"] == 1
    assert list(doc["scenarios"]) == list(SCENARIOS)
    for name, result in doc["scenarios"].items():
        assert "error" not in result, (name, result.get("error"))
        assert result["metrics"], name
        for metric_name, metric in result["metrics"].items():
            where = f"{name}.{metric_name}"
            assert metric["better"] in ("higher", "lower"), where
            _check_summary(metric["chatgate"], where)
            if metric["floor"] is not None:
                _check_summary(metric["floor"], where)
                assert metric["ratio"] is None or metric["ratio"] >= 0, where
            if metric["target"] is not None:
                assert isinstance(metric["meets_target"], bool), where

    pipeline = doc["scenarios"]["pipeline"]["metrics"]
    assert pipeline["turns_per_s_1"]["target"] == 5000
    assert pipeline["overhead_p99_ms_1"]["target"] == 2
    assert doc["scenarios"]["memory"]["metrics"]["kb_per_warm_session"]["target"] == 30
    assert doc["scenarios"]["startup"]["metrics"]["ready_s"]["target"] == 1.5
    for replies in ("llm_missing", "echo_missing"):
        assert doc["scenarios"]["telegram"]["metrics"][replies]["chatgate"]["median"] is not None
    # the table on stdout has one row per metric plus the header
    rows = [line for line in stdout.splitlines() if line.startswith("| ")]
    total = sum(len(r["metrics"]) for r in doc["scenarios"].values())
    assert len(rows) == total + 1
