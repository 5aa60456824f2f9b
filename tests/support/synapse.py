"""A real Synapse homeserver for the Matrix tests: SQLite, loopback, no federation.

Started once per test session (per xdist worker) in a temporary folder; users are registered
through the shared-secret admin API (`/_synapse/admin/v1/register`), so no registration is
open. Rate limits are lifted for everyone but the `limited` user names the tests pick.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

SERVER_NAME = "chatgate.test"
SHARED_SECRET = "synapse-registration-secret-for-tests"
START_TIMEOUT_S = 60.0
MAX_UPLOAD = "20M"

_LIFTED = {"per_second": 10_000, "burst_count": 100_000}

CONFIG = """
server_name: "{server_name}"
pid_file: "{root}/homeserver.pid"
public_baseurl: "http://127.0.0.1:{port}/"
listeners:
  - port: {port}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: "{root}/homeserver.db"
log_config: "{root}/log.yaml"
media_store_path: "{root}/media"
max_upload_size: {max_upload}
registration_shared_secret: "{secret}"
enable_registration: false
report_stats: false
signing_key_path: "{root}/signing.key"
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
presence:
  enabled: false
url_preview_enabled: false
enable_authenticated_media: true
macaroon_secret_key: "{macaroon}"
form_secret: "{form}"
rc_message: {lifted}
rc_registration: {lifted}
rc_login:
  address: {lifted}
  account: {lifted}
  failed_attempts: {lifted}
rc_joins:
  local: {lifted}
  remote: {lifted}
rc_invites:
  per_room: {lifted}
  per_user: {lifted}
  per_issuer: {lifted}
rc_admin_redaction: {lifted}
rc_media_create: {lifted}
rc_key_requests: {lifted}
rc_3pid_validation: {lifted}
rc_joins_per_room: {lifted}
rc_presence:
  per_user: {lifted}
rc_delayed_event_mgmt: {lifted}
"""

LOG_CONFIG = """
version: 1
formatters:
  plain: {format: "%(asctime)s %(name)s %(levelname)s %(message)s"}
handlers:
  file: {class: logging.FileHandler, formatter: plain, filename: "ROOT/homeserver.log"}
root: {level: WARNING, handlers: [file]}
disable_existing_loggers: false
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _signing_key(path: Path) -> None:
    from signedjson.key import generate_signing_key, write_signing_keys

    with path.open("w") as fh:
        write_signing_keys(fh, [generate_signing_key("a_test")])


@dataclass
class MatrixUser:
    user_id: str
    access_token: str
    device_id: str
    password: str


@dataclass
class Synapse:
    """One running homeserver."""

    root: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    _counter: int = field(default=0, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def launch(cls) -> Synapse:
        root = Path(tempfile.mkdtemp(prefix="synapse-"))
        port = _free_port()
        lifted = "{" + ", ".join(f"{k}: {v}" for k, v in _LIFTED.items()) + "}"
        (root / "homeserver.yaml").write_text(
            CONFIG.format(
                server_name=SERVER_NAME,
                root=root,
                port=port,
                secret=SHARED_SECRET,
                max_upload=MAX_UPLOAD,
                macaroon=secrets.token_hex(16),
                form=secrets.token_hex(16),
                lifted=lifted,
            )
        )
        (root / "log.yaml").write_text(LOG_CONFIG.replace("ROOT", str(root)))
        _signing_key(root / "signing.key")
        server = cls(root, port)
        server.process = subprocess.Popen(
            [sys.executable, "-m", "synapse.app.homeserver", "-c", str(root / "homeserver.yaml")],
            cwd=root,
            stdout=(root / "stdout.log").open("wb"),
            stderr=subprocess.STDOUT,
            env={**os.environ, "SYNAPSE_ASYNC_IO_REACTOR": "0"},
        )
        server._wait_ready()
        return server

    def _wait_ready(self) -> None:
        import urllib.request

        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"synapse exited: {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/health", timeout=1) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"synapse did not start in {START_TIMEOUT_S} s: {self.log_tail()}")

    def log_tail(self) -> str:
        out = []
        for name in ("stdout.log", "homeserver.log"):
            path = self.root / name
            if path.exists():
                out.append(path.read_text()[-3000:])
        return "\n".join(out)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def unique(self, stem: str) -> str:
        """A localpart no other test of this session used."""
        self._counter += 1
        return f"{stem}{self._counter}x{secrets.token_hex(3)}"

    async def register(self, stem: str, *, admin: bool = False) -> MatrixUser:
        """A new user through the shared-secret admin API, logged in on one device."""
        localpart = self.unique(stem)
        password = secrets.token_urlsafe(12)
        url = f"{self.base_url}/_synapse/admin/v1/register"
        async with aiohttp.ClientSession() as http:
            async with http.get(url) as resp:
                nonce = (await resp.json())["nonce"]
            body: dict[str, Any] = {
                "nonce": nonce,
                "username": localpart,
                "password": password,
                "admin": admin,
                "mac": _mac(nonce, localpart, password, admin),
            }
            async with http.post(url, json=body) as resp:
                data = await resp.json()
                if resp.status != 200:
                    raise RuntimeError(f"register failed: {data}")
        return MatrixUser(data["user_id"], data["access_token"], data["device_id"], password)


def _mac(nonce: str, user: str, password: str, admin: bool) -> str:
    mac = hmac.new(SHARED_SECRET.encode(), digestmod=hashlib.sha1)
    mac.update(nonce.encode())
    mac.update(b"\x00")
    mac.update(user.encode())
    mac.update(b"\x00")
    mac.update(password.encode())
    mac.update(b"\x00")
    mac.update(b"admin" if admin else b"notadmin")
    return mac.hexdigest()
