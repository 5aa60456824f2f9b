"""The Socket Mode drop filter: the first drop record of a minute passes as one plain warning,
the rest of that drop are dropped, anything else passes untouched."""

from __future__ import annotations

import logging

from chatgate.channels.slack.sdk_logs import DroppedSocketFilter


def record(msg: str, exc: BaseException | None = None) -> logging.LogRecord:
    info = (type(exc), exc, None) if exc is not None else None
    level = logging.ERROR if exc else logging.WARNING
    return logging.LogRecord("slack_bolt", level, __file__, 1, msg, (), info)


def test_one_line_per_drop_and_nothing_else_touched() -> None:
    now = [0.0]
    quiet = DroppedSocketFilter(now=lambda: now[0])
    first = record("Failed to run a request listener", ConnectionResetError("closing transport"))
    assert quiet.filter(first)
    assert first.exc_info is None and first.levelname == "WARNING"
    assert "Socket Mode connection dropped" in first.getMessage()
    assert not quiet.filter(record("Failed to run a request listener", ConnectionResetError()))
    assert not quiet.filter(record("The current session (s_1) is no longer active. Failed"))
    other = record("Failed to run a request listener", ValueError("a bug"))
    assert quiet.filter(other) and other.exc_info is not None  # a real error keeps its traceback
    now[0] = 61.0  # a later drop is news again
    assert quiet.filter(record("The current session (s_2) is no longer active. Failed"))
