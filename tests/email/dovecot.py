"""A real Dovecot IMAP server for the email tests: a throwaway config in a temp dir, loopback
only, plaintext auth, passwd-file users, Maildir storage. Started once per test session."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.requires import missing

PASSWORD = "imap-secret-Pa55"
DOVECOT = os.environ.get("CHATGATE_DOVECOT", "/usr/sbin/dovecot")

_CONFIG = """\
protocols = imap
listen = 127.0.0.1
base_dir = {base}/run
state_dir = {base}/state
instance_name = chatgate-test-{port}
log_path = {base}/dovecot.log
info_log_path = {base}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:{base}/mail/%u
first_valid_uid = 1
default_login_user = {login_user}
default_internal_user = {internal_user}
mail_uid = {mail_uid}
mail_gid = {mail_gid}
mail_max_userip_connections = 100
imap_idle_notify_interval = 1 secs
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
service imap-login {{
  chroot =
}}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {base}/users
}}
passdb {{
  driver = static
  args = password={password}
}}
userdb {{
  driver = static
  args = uid={mail_uid} gid={mail_gid} home={base}/mail/%u
}}
"""


@dataclass
class Dovecot:
    """One running Dovecot. Any user name logs in with ``PASSWORD`` (its mailbox is made on first
    login), so each test takes a fresh mailbox without Dovecot re-reading a users file."""

    base: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    users: dict[str, str] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return "127.0.0.1"

    def add_user(self, name: str, password: str) -> None:
        self.users[name] = password
        lines = [f"{u}:{{PLAIN}}{p}::::::" for u, p in self.users.items()]
        path = self.base / "users"
        path.write_text("\n".join(lines) + "\n")
        # Dovecot re-reads the file when its mtime changes, in whole seconds: make it change
        stamp = time.time() + len(self.users)
        os.utime(path, (stamp, stamp))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        shutil.rmtree(self.base, ignore_errors=True)

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.base / "dovecot.log").read_text(errors="replace")
        return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _users() -> tuple[str, str, int, int]:
    """(login user, internal user, mail uid, mail gid): Dovecot's own users when we are root
    (it refuses to run mail as root), ourselves otherwise."""
    if os.geteuid() == 0:
        internal = pwd.getpwnam("dovecot")
        return "dovenull", "dovecot", internal.pw_uid, internal.pw_gid
    me = pwd.getpwuid(os.geteuid())
    return me.pw_name, me.pw_name, me.pw_uid, me.pw_gid


def start_dovecot() -> Dovecot:
    if not os.access(DOVECOT, os.X_OK):
        missing("Dovecot", "apt-get install dovecot-imapd")
    base = Path(tempfile.mkdtemp(prefix="chatgate-dovecot-"))
    base.chmod(0o755)
    login, internal, uid, gid = _users()
    (base / "mail").mkdir()
    if os.geteuid() == 0:
        os.chown(base / "mail", uid, gid)
    port = _free_port()
    config = base / "dovecot.conf"
    config.write_text(
        _CONFIG.format(
            base=base,
            port=port,
            login_user=login,
            internal_user=internal,
            mail_uid=uid,
            mail_gid=gid,
            password=PASSWORD,
        )
    )
    server = Dovecot(base, port)
    server.add_user("fixed", "fixed-Pa55")
    server.process = subprocess.Popen(
        [DOVECOT, "-F", "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            err = server.process.stderr.read().decode() if server.process.stderr else ""
            raise RuntimeError(f"dovecot exited: {err}\n{server.log()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5) as s:
            if s.recv(100).startswith(b"* OK"):
                return server
        time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"dovecot did not listen on {port}:\n{server.log()}")
