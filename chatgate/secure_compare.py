"""Constant-time comparison of secrets that never raises on odd input.

``hmac.compare_digest`` raises ``TypeError`` for a ``str`` holding non-ASCII characters, so a
garbled header could turn into a 500. Every credential check goes through :func:`secure_equals`,
which compares UTF-8 bytes instead.
"""

from __future__ import annotations

import hmac


def _as_bytes(value: str | bytes) -> bytes:
    if isinstance(value, bytes):
        return value
    return value.encode("utf-8", errors="surrogatepass")


def secure_equals(given: str | bytes | None, expected: str | bytes | None) -> bool:
    """True when both are present and equal; the time taken does not depend on where they differ."""
    if given is None or expected is None:
        return False
    return hmac.compare_digest(_as_bytes(given), _as_bytes(expected))
