"""The systemd unit: `systemd-analyze verify` accepts it, and it sets the limits the daemon needs."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

from tests.requires import missing

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "chatgate.service"


def service() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    return parser["Service"]


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        missing("systemd-analyze is not installed", "apt-get install systemd")
    # verify checks that ExecStart exists: point it at this venv's entry point.
    binary = Path(sys.executable).parent / "chatgate"
    unit = tmp_path / "chatgate.service"
    unit.write_text(UNIT.read_text().replace("/usr/local/bin/chatgate", str(binary)))
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_unit_sets_file_limit_restart_policy_and_watchdog() -> None:
    svc = service()
    assert int(svc["LimitNOFILE"]) >= 4096  # above the connection cap plus SDK and SQLite files
    assert svc["Type"] == "notify" and int(svc["WatchdogSec"]) > 0
    assert "78" in svc["RestartPreventExitStatus"].split()  # an invalid config is not retried
    assert svc["ExecReload"].endswith("-HUP $MAINPID")
    assert svc["User"] != "root"
