"""Request signature schemes shared by HTTP ingress: generic and GitHub (HMAC-SHA256 of the body)
and Slack v0 (timestamped, used by webhook routes and the Slack Events API)."""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Mapping
from typing import Literal

from chatgate.secure_compare import secure_equals

SignatureKind = Literal["generic", "github", "slack", "none"]
SLACK_WINDOW_S = 300.0
HEADERS = {"generic": "X-Signature-256", "github": "X-Hub-Signature-256"}


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value


def _hmac_hex(secret: str, data: bytes) -> str:
    return hmac.new(secret.encode(), data, hashlib.sha256).hexdigest()


def verify(
    kind: SignatureKind, secret: str | None, body: bytes, headers: Mapping[str, str], now: float
) -> str | None:
    """None when the request is authentic, else a short reason (never echoing secrets)."""
    if kind == "none":
        return None
    if not secret:
        return "route has no secret configured"
    if kind == "slack":
        stamp = _header(headers, "X-Slack-Request-Timestamp")
        given = _header(headers, "X-Slack-Signature")
        if not stamp or not given:
            return "missing X-Slack-Request-Timestamp or X-Slack-Signature"
        try:
            ts = float(stamp)
        except ValueError:
            return "bad X-Slack-Request-Timestamp"
        if not math.isfinite(ts):
            return "bad X-Slack-Request-Timestamp"
        if abs(now - ts) > SLACK_WINDOW_S:
            return "timestamp outside the 5 minute window"
        expected = "v0=" + _hmac_hex(secret, b"v0:" + stamp.encode() + b":" + body)
        return None if secure_equals(given, expected) else "signature mismatch"
    header = HEADERS[kind]
    given = _header(headers, header)
    if not given:
        return f"missing {header}"
    expected = "sha256=" + _hmac_hex(secret, body)
    return None if secure_equals(given.strip(), expected) else "signature mismatch"


def sign(kind: SignatureKind, secret: str, body: bytes, now: float) -> dict[str, str]:
    """Headers a sender would attach (tests, benchmarks and the README example use this)."""
    if kind == "none":
        return {}
    if kind == "slack":
        stamp = str(int(now))
        return {
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": "v0=" + _hmac_hex(secret, b"v0:" + stamp.encode() + b":" + body),
        }
    return {HEADERS[kind]: "sha256=" + _hmac_hex(secret, body)}
