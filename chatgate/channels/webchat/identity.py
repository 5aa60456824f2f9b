"""Who a browser is: a random session id in an HMAC-signed cookie, and its CSRF token.

The session id is the chat and sender id of one direct conversation. The signing key is derived
from a per-install secret kept in the state directory (never printed), the channel's name and,
under `auth: token`, a digest of the token: rotating the token signs every browser out.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from chatgate.secure_compare import secure_equals

KEY_FILE = "webchat.key"
KEY_BYTES = 32
_SID = re.compile(r"[A-Za-z0-9_-]{22}\Z")


def new_session_id() -> str:
    """128 random bits, URL-safe (22 characters)."""
    return secrets.token_urlsafe(16)


def valid_session_id(sid: str) -> bool:
    return bool(_SID.match(sid))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def load_install_key(state_dir: Path) -> bytes:
    """The install's cookie secret, created (mode 0600) on first use."""
    path = state_dir / KEY_FILE
    with contextlib.suppress(FileNotFoundError):
        key = path.read_bytes()
        if len(key) >= KEY_BYTES:
            return key
    state_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    try:
        os.link(tmp, path)  # first writer wins; a concurrent one reads the winner's key
    except FileExistsError:
        key = path.read_bytes()
    finally:
        tmp.unlink()
    return key


@dataclass(frozen=True)
class Signer:
    """Signs and checks session cookies and CSRF tokens of one web chat channel."""

    key: bytes

    @classmethod
    def derive(cls, install_key: bytes, channel: str, token: str | None) -> Signer:
        token_digest = hashlib.sha256(token.encode()).digest() if token else b""
        material = b"chatgate-webchat\0" + channel.encode() + b"\0" + token_digest
        return cls(hmac.new(install_key, material, hashlib.sha256).digest())

    def _mac(self, text: str) -> str:
        return _b64(hmac.new(self.key, text.encode(), hashlib.sha256).digest())

    def issue(self, sid: str, now: float) -> str:
        payload = f"{sid}.{int(now)}"
        return f"{payload}.{self._mac(payload)}"

    def verify(self, value: str, now: float, max_age_s: float) -> str | None:
        """The session id of a valid, unexpired cookie value, else None."""
        parts = value.split(".")
        if len(parts) != 3 or not valid_session_id(parts[0]) or not parts[1].isdigit():
            return None
        payload = f"{parts[0]}.{parts[1]}"
        if not secure_equals(parts[2], self._mac(payload)):
            return None
        issued = int(parts[1])
        if issued > now + 60 or now - issued > max_age_s:
            return None
        return parts[0]

    def csrf(self, sid: str) -> str:
        return self._mac("csrf." + sid)

    def check_csrf(self, sid: str, given: str) -> bool:
        return bool(given) and secure_equals(given, self.csrf(sid))
