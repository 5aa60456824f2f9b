"""How the CLI on the same host finds the running daemon and proves it may change things.

At start the daemon writes `api.json` into its state directory (mode 0600): its pid, the URL it
actually listens on (also with `port: 0` or `host: 0.0.0.0`) and a random token good for this
process only. Whoever can read the state directory is the operator of this daemon, so the token
authorises the operator API like `gateway.api_token` does; a reverse proxy that forwards every
path still cannot call mutating endpoints without it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from chatgate.secure_compare import secure_equals

log = logging.getLogger("chatgate.api")
FILE_NAME = "api.json"


@dataclass(frozen=True)
class LocalEndpoint:
    pid: int
    url: str
    token: str


class LocalApi:
    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / FILE_NAME
        self._token = secrets.token_urlsafe(32)

    def publish(self, url: str) -> None:
        data = {"pid": os.getpid(), "url": url, "token": self._token}
        tmp = self.path.with_suffix(".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("cannot write %s; the CLI will use gateway.http: %s", self.path, exc)

    def withdraw(self) -> None:
        with contextlib.suppress(OSError):
            if self._mine():
                self.path.unlink()

    def _mine(self) -> bool:
        endpoint = read_endpoint(self.path.parent)
        return endpoint is not None and endpoint.pid == os.getpid()

    def matches(self, given: str) -> bool:
        return secure_equals(given, self._token)


def read_endpoint(state_dir: Path) -> LocalEndpoint | None:
    """The running daemon's endpoint, or None (no file, unreadable, or its process is gone)."""
    try:
        data = json.loads((state_dir / FILE_NAME).read_text(encoding="utf-8"))
        endpoint = LocalEndpoint(int(data["pid"]), str(data["url"]), str(data["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(endpoint.pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, owned by another user
    return endpoint
