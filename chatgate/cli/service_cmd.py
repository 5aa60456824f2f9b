"""`chatgate install-service`: the systemd unit for the chatgate being run, its user, next steps.

Debian 12's pip refuses a system-wide install (externally managed), so chatgate lives in a venv
(e.g. /opt/chatgate); the unit must name that venv's entry point, which this command finds from
the running interpreter instead of assuming /usr/local/bin.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

from chatgate.cli.service_unit import CONFIG_DIR, STATE_DIR, UnitSpec, render_unit

UNIT_PATH = Path("/etc/systemd/system/chatgate.service")
EX_NOPERM = 77
EX_OSERR = 71


def entry_point() -> Path:
    """This installation's `chatgate` script: next to the interpreter (a venv), else on PATH."""
    beside = Path(sys.executable).parent / "chatgate"
    if beside.exists():
        return beside.absolute()
    found = shutil.which("chatgate")
    return Path(found).absolute() if found else beside.absolute()


def unreadable_parents(path: Path) -> list[Path]:
    """Directories above ``path`` another account cannot enter (the service user could not
    start it: e.g. a venv under a 0700 home directory)."""
    return [p for p in path.parents if p.exists() and not os.stat(p).st_mode & 0o001]


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _create_user(name: str) -> str | None:
    """Create a system account without a login; the error text, or None on success."""
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    command = [useradd, "--system", "--user-group", "--home-dir", str(STATE_DIR),
               "--no-create-home", "--shell", "/usr/sbin/nologin", name]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except OSError as exc:
        return f"{useradd}: {exc.strerror}"
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


def install_service(*, output: str | None, user: str, dynamic_user: bool, print_only: bool) -> int:
    exe = entry_point()
    spec = UnitSpec(PurePosixPath(exe), user, dynamic_user)
    text = render_unit(spec)
    if print_only:
        sys.stdout.write(text)
        return 0
    target = Path(output) if output else UNIT_PATH
    blocked = unreadable_parents(exe)
    if blocked:
        print(
            f"chatgate install-service: the service user cannot reach {exe}: "
            f"{', '.join(map(str, blocked))} is closed to other users; install chatgate in a venv "
            "under /opt (python3 -m venv /opt/chatgate)",
            file=sys.stderr,
        )
        return EX_OSERR
    if not dynamic_user and not _user_exists(user):
        if os.geteuid() != 0:
            print(
                f"chatgate install-service: user {user!r} does not exist; run with sudo "
                "(it is created) or pass --dynamic-user",
                file=sys.stderr,
            )
            return EX_NOPERM
        error = _create_user(user)
        if error is not None:
            print(
                f"chatgate install-service: cannot create user {user!r}: {error}", file=sys.stderr
            )
            return EX_OSERR
        print(f"created system user {user}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        target.chmod(0o644)
    except PermissionError:
        print(f"chatgate install-service: cannot write {target}; run with sudo", file=sys.stderr)
        return EX_NOPERM
    print(f"wrote {target} (ExecStart={exe} run)")
    config = CONFIG_DIR / "gateway.yaml"
    print("next:")
    if not Path(str(config)).exists():
        print(f"  sudo {exe} init --output {config}")
    env = CONFIG_DIR / "env"
    print(f"  sudo install -m 0600 /dev/null {env} && sudoedit {env}")
    print("      # CHATGATE_API_TOKEN=…, OPENAI_API_KEY=…, TELEGRAM_BOT_TOKEN=… (one per line)")
    print("  sudo systemctl daemon-reload && sudo systemctl enable --now chatgate")
    print(f"  sudo {exe} status     # finds the daemon through {CONFIG_DIR} and {STATE_DIR}")
    return 0
