"""Compact JSON (``separators=(",", ":")``, ASCII escapes) from one encoder made once.

``JSONEncoder.encode`` builds its C encoder on every call: a third of what encoding a turn's
journaled reply cost. The shared one checks no circular references (what the journal stores is
plain data built by the gateway); the text is the same as ``JSONEncoder.encode``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

_ENCODER = json.JSONEncoder(separators=(",", ":"))
c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # the C accelerator, if built
_C = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None, _ENCODER.default, encode_basestring_ascii, None, ":", ",", False, False, True
    )
)


_C_STANDARD = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None, _ENCODER.default, encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
)


def standard_json(value: Any) -> str:
    """``json.dumps(value)`` (the default separators) from the shared C encoder: for answers
    sent on every request (a webhook's sync reply)."""
    if _C_STANDARD is None:
        return json.dumps(value)
    return "".join(_C_STANDARD(value, 0))


def compact_json(value: Any) -> str:
    """``json.JSONEncoder(separators=(",", ":")).encode(value)``."""
    if _C is None:
        return _ENCODER.encode(value)
    return "".join(_C(value, 0))


def scalar_json(value: Any, string: Callable[[str], str] = encode_basestring_ascii) -> str | None:
    """``value`` as the encoder writes it, for str (through ``string``: ASCII escapes unless the
    caller's encoder keeps non-ASCII), None, bool, int and finite floats; None for anything
    else, which the caller encodes whole."""
    kind = type(value)
    if kind is str:
        return string(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float and value - value == 0.0:
        return float.__repr__(value)
    return None
