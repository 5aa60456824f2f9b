"""Quiet slack_sdk's Socket Mode logging when the connection drops.

Each envelope whose ack could not be written to a dropped socket made slack_sdk log "Failed to
run a request listener" with a full traceback, then warned "session ... is no longer active" per
message (11 tracebacks and 12 warnings for one drop in a burst of 20). The acks
are lost, not the messages: Slack redelivers unacked envelopes on the new connection, and the
journal dedupes them. This filter keeps the first such record per minute as one line without
the traceback and drops the rest; every other SDK record passes untouched.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from chatgate.policies.outage import OutageEvent, OutageState, on_failure

REMIND_S = 60.0
_INACTIVE = "is no longer active"  # slack_sdk's warning per message sent to a dead session


class DroppedSocketFilter(logging.Filter):
    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._now = now
        self._state = OutageState()

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, ConnectionError) and _INACTIVE not in str(record.msg):
            return True
        now = self._now()
        if self._state.since is not None and now - self._state.said_at >= REMIND_S:
            self._state = OutageState()  # a new drop, not the same one
        self._state, event = on_failure(self._state, now, REMIND_S)
        if event is not OutageEvent.BROKE:
            return False
        record.msg = (
            "Socket Mode connection dropped; unacked envelopes come again on reconnect (%s)"
        )
        why = f"{type(exc).__name__}: {exc}" if exc is not None else "session no longer active"
        record.args = (why[:200],)
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text = None, None
        return True


def quiet_dropped_sockets(logger: logging.Logger) -> None:
    """Install the filter once on ``logger`` (the one handed to slack_bolt and slack_sdk)."""
    if not any(isinstance(f, DroppedSocketFilter) for f in logger.filters):
        logger.addFilter(DroppedSocketFilter())
