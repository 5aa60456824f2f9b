"""The systemd unit: `chatgate install-service` writes it for the running venv, `systemd-analyze
verify` accepts it, `systemd-analyze security` scores it well below the plain unit's 8.5, and it
sets the limits, restart policy and hardening the daemon needs."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from chatgate.cli.service_cmd import unreadable_parents
from chatgate.cli.service_unit import STATE_DIR, UnitSpec, render_unit
from tests.requires import missing

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "chatgate.service"
CHATGATE = Path(sys.executable).parent / "chatgate"
MAX_EXPOSURE = 2.0  # systemd-analyze security: the plain unit scored 8.5 EXPOSED


def service(text: str) -> dict[str, list[str]]:
    """Every Service= setting, repeated keys kept in order."""
    out: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and not line.startswith("#") and section == "Service":
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


def analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        missing("systemd-analyze is not installed", "apt-get install systemd")
    return found


def install(tmp_path: Path, *extra: str) -> Path:
    unit = tmp_path / "chatgate.service"
    done = subprocess.run(
        [str(CHATGATE), "install-service", "--output", str(unit), *extra],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"ExecStart={CHATGATE} run" in done.stdout
    return unit


def test_the_shipped_unit_is_the_rendered_template() -> None:
    assert UNIT.read_text() == render_unit(), "regenerate: python -c 'from chatgate.cli...'"


@pytest.mark.parametrize(
    "extra", [("--user", "nobody"), ("--dynamic-user",)], ids=["user", "dynamic"]
)
def test_installed_unit_passes_systemd_analyze_verify(
    tmp_path: Path, extra: tuple[str, ...]
) -> None:
    binary = analyze()
    unit = install(tmp_path, *extra)
    done = subprocess.run([binary, "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_systemd_analyze_security_scores_below_the_threshold(tmp_path: Path) -> None:
    binary = analyze()
    unit = install(tmp_path, "--user", "nobody")
    done = subprocess.run(
        [binary, "security", "--offline=true", f"--threshold={int(MAX_EXPOSURE * 10)}", str(unit)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", done.stdout)
    if found is None and "--offline" in done.stderr:
        missing("systemd-analyze security --offline needs systemd 250+", "Debian 12 has 252")
    assert found is not None, done.stdout + done.stderr
    assert float(found.group(1)) <= MAX_EXPOSURE, done.stdout
    assert done.returncode == 0, done.stdout


def test_unit_sets_limits_restart_policy_watchdog_and_hardening() -> None:
    text = render_unit()
    svc = service(text)
    assert int(svc["LimitNOFILE"][0]) >= 4096  # above the connection cap plus SDK and SQLite files
    assert svc["Type"] == ["notify"] and int(svc["WatchdogSec"][0]) > 0
    assert "78" in svc["RestartPreventExitStatus"][0].split()  # an invalid config is not retried
    assert int(svc["TimeoutStopSec"][0]) > 30  # longer than the drain
    assert "StartLimitBurst=5" in text  # exit 71 (port taken) is retried, but not forever
    assert svc["ExecReload"][0].endswith("-HUP $MAINPID")
    assert svc["User"] != ["root"]
    assert svc["CapabilityBoundingSet"] == [""] and svc["UMask"] == ["0077"]
    assert svc["SystemCallFilter"] == ["@system-service"]
    for key in ("ProtectKernelTunables", "ProtectKernelModules", "RestrictNamespaces",
                "MemoryDenyWriteExecute", "NoNewPrivileges", "PrivateDevices"):  # fmt: skip
        assert svc[key] == ["true"], key
    assert svc["ProtectProc"] == ["invisible"]


def test_a_venv_under_home_stays_readable_and_dynamic_user_needs_no_account() -> None:
    home = service(render_unit(UnitSpec(PurePosixPath("/home/op/venv/bin/chatgate"))))
    assert home["ProtectHome"] == ["read-only"]
    assert home["ExecStart"] == ["/home/op/venv/bin/chatgate run"]
    opt = service(render_unit(UnitSpec(PurePosixPath("/opt/chatgate/bin/chatgate"))))
    assert opt["ProtectHome"] == ["true"]
    dynamic = service(render_unit(UnitSpec(dynamic_user=True)))
    assert dynamic["DynamicUser"] == ["yes"] and "User" not in dynamic


def test_a_venv_the_service_user_cannot_enter_is_named(tmp_path: Path) -> None:
    closed = tmp_path / "home"
    entry = closed / "venv" / "bin" / "chatgate"
    entry.parent.mkdir(parents=True)
    entry.touch()
    os.chmod(closed, 0o700)
    os.chmod(tmp_path, 0o755)
    assert closed in unreadable_parents(entry)
    os.chmod(closed, 0o755)
    assert closed not in unreadable_parents(entry)


NO_PASSWD_UID = 61234  # like a DynamicUser= uid on a system without libnss-systemd


@pytest.mark.parametrize("spec", [UnitSpec(dynamic_user=True), UnitSpec()], ids=["dynamic", "user"])
def test_the_unit_gives_the_daemon_a_home_a_uid_without_passwd_entry_can_start_with(
    spec: UnitSpec,
) -> None:
    """slack_sdk calls Path.home() at import; without HOME and without a passwd entry for the
    uid (DynamicUser= without libnss-systemd) that raises and the daemon crash-loops."""
    unit_env = dict(e.split("=", 1) for e in service(render_unit(spec))["Environment"])
    assert unit_env["HOME"] == str(STATE_DIR)
    if os.getuid() != 0:
        missing("switching to a uid without a passwd entry needs root", "run the tests as root")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        missing("setpriv is not installed", "apt-get install util-linux")
    with pytest.raises(KeyError):
        pwd.getpwuid(NO_PASSWD_UID)
    as_dynamic_user = [setpriv, f"--reuid={NO_PASSWD_UID}", f"--regid={NO_PASSWD_UID}"]
    done = subprocess.run(
        [*as_dynamic_user, "--clear-groups", sys.executable, "-c",
         "import chatgate.channels.slack.adapter"],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **unit_env},
        capture_output=True, text=True, timeout=60, cwd="/",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
