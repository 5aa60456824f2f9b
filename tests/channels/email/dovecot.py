"""A real Dovecot IMAP server for the email tests: a throwaway config in a temp dir, loopback
only, plaintext auth, passwd-file users, Maildir storage. Started once per test session."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from tests.fakes.tls import session_ca
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
ssl = yes
ssl_cert = <{base}/cert.pem
ssl_key = <{base}/key.pem
disable_plaintext_auth = no
auth_mechanisms = plain login xoauth2
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
    address = 127.0.0.1
    port = {tls_port}
    ssl = yes
  }}
}}
service anvil {{
  chroot =
}}
service imap-login {{
  chroot =
}}
passdb {{
  driver = oauth2
  mechanisms = xoauth2
  args = {base}/oauth2.conf.ext
}}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {base}/users
}}
passdb {{
  driver = static
  mechanisms = plain login
  args = password={password}
}}
userdb {{
  driver = static
  args = uid={mail_uid} gid={mail_gid} home={base}/mail/%u
}}
"""
_OAUTH2 = """\
tokeninfo_url = http://127.0.0.1:{port}/tokeninfo?access_token=
username_attribute = username
active_attribute = active
active_value = true
"""
TOKEN_PREFIX = "oauth-token-for-"  # the token the introspection server accepts for a user


class _TokenInfo(http.server.BaseHTTPRequestHandler):
    """The identity provider's token introspection: ``oauth-token-for-<user>`` is valid."""

    def do_GET(self) -> None:
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get(
            "access_token", [""]
        )[0]
        if not token.startswith(TOKEN_PREFIX):
            self.send_response(401)
            self.end_headers()
            return
        body = json.dumps({"username": token[len(TOKEN_PREFIX) :], "active": "true"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@dataclass
class Dovecot:
    """One running Dovecot. Any user name logs in with ``PASSWORD`` (its mailbox is made on first
    login), so each test takes a fresh mailbox without Dovecot re-reading a users file."""

    base: Path
    port: int
    tls_port: int = 0  # implicit TLS, a certificate of the test CA (`ca_pem`)
    ca_pem: str = ""
    process: subprocess.Popen[bytes] | None = None
    tokeninfo: http.server.HTTPServer | None = None
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
        if self.tokeninfo is not None:
            self.tokeninfo.shutdown()
            self.tokeninfo.server_close()
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
    port, tls_port = _free_port(), _free_port()
    ca = session_ca()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    (base / "cert.pem").write_bytes(b"".join(b.bytes() for b in leaf.cert_chain_pems))
    (base / "key.pem").write_bytes(leaf.private_key_pem.bytes())
    config = base / "dovecot.conf"
    config.write_text(
        _CONFIG.format(
            base=base,
            port=port,
            tls_port=tls_port,
            login_user=login,
            internal_user=internal,
            mail_uid=uid,
            mail_gid=gid,
            password=PASSWORD,
        )
    )
    tokeninfo = http.server.HTTPServer(("127.0.0.1", 0), _TokenInfo)
    threading.Thread(target=tokeninfo.serve_forever, daemon=True).start()
    (base / "oauth2.conf.ext").write_text(_OAUTH2.format(port=tokeninfo.server_address[1]))
    server = Dovecot(base, port, tls_port, ca.cert_pem.bytes().decode(), tokeninfo=tokeninfo)
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
