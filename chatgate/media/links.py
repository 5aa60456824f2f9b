"""Signed, expiring download links for stored reply files (web chat, webhook sync answers).

A link names the file reference, its MIME type and an expiry, signed with HMAC-SHA256 under a key
kept in the state dir: it cannot be guessed or extended, and it stops working when it expires.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from urllib.parse import quote, urlencode

LINK_TTL_S = 24 * 3600
KEY_FILE = "file-links.key"
ROUTE = "/files"
SAFE_INLINE = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def load_or_create_key(state_dir: Path) -> bytes:
    """The link-signing key of this state dir (created 0600 on first use)."""
    path = state_dir / KEY_FILE
    try:
        return path.read_bytes()
    except FileNotFoundError:
        state_dir.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
        return key


class FileLinks:
    """Makes and checks `/files/<ref>/<name>?type=…&exp=…&sig=…` paths."""

    def __init__(self, state_dir: Path, ttl_s: float = LINK_TTL_S) -> None:
        self._state_dir = state_dir
        self._key: bytes | None = None
        self.ttl_s = ttl_s

    def load(self) -> None:
        """Read (or create) the key; called at start, once the state dir is ours."""
        self._key = load_or_create_key(self._state_dir)

    def _sig(self, ref: str, mime: str, exp: int) -> str:
        if self._key is None:
            raise RuntimeError("file links are used before the gateway started")
        msg = f"{ref}\n{mime}\n{exp}".encode()
        return hmac.new(self._key, msg, hashlib.sha256).hexdigest()[:40]

    def path(self, ref: str, name: str, mime: str, now: float) -> str:
        exp = int(now + self.ttl_s)
        query = urlencode({"type": mime, "exp": exp, "sig": self._sig(ref, mime, exp)})
        return f"{ROUTE}/{ref}/{quote(name, safe='')}?{query}"

    def valid(self, ref: str, mime: str, exp: str, sig: str, now: float) -> bool:
        """True for an unexpired link this key signed."""
        if not exp.isdigit() or int(exp) < now:
            return False
        return hmac.compare_digest(self._sig(ref, mime, int(exp)), sig)
