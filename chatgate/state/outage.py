"""Log a dependency outage as a few lines: the decision is `policies.outage`, this says it.

Expected failures (the store unreachable, a socket error, a timeout) are logged without a
traceback; anything else gets its traceback once per outage, when it breaks.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

from chatgate.model.errors import StateUnavailable
from chatgate.policies.outage import OutageEvent, OutageState, on_failure, on_success

EXPECTED: tuple[type[BaseException], ...] = (StateUnavailable, OSError, TimeoutError)
REMIND_S = 60.0


def expected(exc: BaseException) -> bool:
    """A failure logged without a traceback. A Redis error counts only once redis is loaded
    (by a Redis store): a gateway on SQLite does not import the client to recognise it."""
    if isinstance(exc, EXPECTED):
        return True
    errors = sys.modules.get("redis.exceptions")
    return errors is not None and isinstance(exc, errors.RedisError)


class OutageReporter:
    """The log lines of one failing component (``what``: "pairing notifier", "journal adoption")."""

    def __init__(
        self,
        log: logging.Logger,
        what: str,
        *,
        now: Callable[[], float] = time.monotonic,
        remind_s: float = REMIND_S,
    ) -> None:
        self._log = log
        self.what = what
        self._now = now
        self.remind_s = remind_s
        self.state = OutageState()

    @property
    def down(self) -> bool:
        return self.state.down

    def failed(self, exc: BaseException) -> None:
        now = self._now()
        self.state, event = on_failure(self.state, now, self.remind_s)
        error = f"{type(exc).__name__}: {exc}"[:300]
        if event is OutageEvent.BROKE:
            trace = None if expected(exc) else exc
            self._log.warning(
                "%s failing; retrying quietly", self.what, extra={"error": error}, exc_info=trace
            )
        elif event is OutageEvent.STILL_DOWN:
            since = self.state.since if self.state.since is not None else now
            self._log.warning(
                "%s still failing", self.what,
                extra={"error": error, "for_s": round(now - since), "failures": self.state.failures},
            )  # fmt: skip

    def ok(self) -> None:
        before = self.state
        self.state, event = on_success(self.state)
        if event is OutageEvent.RECOVERED and before.since is not None:
            self._log.info(
                "%s recovered", self.what,
                extra={"after_s": round(self._now() - before.since, 1), "failures": before.failures},
            )  # fmt: skip
