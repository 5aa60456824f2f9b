"""Restart-ladder pieces for channel supervision and a fleet-wide crash-loop breaker.

Per-channel budgets stop one broken channel from flapping; the fleet breaker catches systemic
faults (shared provider down, revoked org token, network partition) that make every channel
restart at once while each individually stays within budget.
"""

from __future__ import annotations

import math
import random
from collections import deque
from enum import StrEnum

from chatgate.model.reasons import SendErrorKind


class ExitClass(StrEnum):
    """How a channel run ended, which decides whether the supervisor restarts it."""

    FATAL = "fatal"
    TRANSIENT = "transient"
    CLEAN = "clean"


def classify_exit(
    kind: SendErrorKind | None,
    *,
    config_error: bool = False,
    conflict: bool = False,
    clean: bool = False,
) -> ExitClass:
    """FATAL (don't restart) for bad credentials, bad config or a competing poller (409)."""
    if kind is SendErrorKind.AUTH_FATAL or config_error or conflict:
        return ExitClass.FATAL
    if clean:
        return ExitClass.CLEAN
    return ExitClass.TRANSIENT


def _check_backoff_args(base_s: float, cap_s: float, jitter: float) -> None:
    if not (math.isfinite(base_s) and base_s >= 0):
        raise ValueError(f"base_s must be finite and >= 0, got {base_s!r}")
    if not (math.isfinite(cap_s) and cap_s >= base_s):
        raise ValueError(f"cap_s must be finite and >= base_s, got {cap_s!r}")
    if not 0.0 <= jitter <= 1.0:
        raise ValueError(f"jitter must be within [0, 1], got {jitter!r}")


def backoff_delay(
    restart_number: int,
    rng: random.Random,
    base_s: float = 1.0,
    cap_s: float = 60.0,
    jitter: float = 0.2,
) -> float:
    """Delay before restart number ``restart_number`` (1-based): jittered doubling, capped."""
    _check_backoff_args(base_s, cap_s, jitter)
    exponent = min(max(restart_number, 1) - 1, 64)
    nominal = min(cap_s, base_s * 2.0**exponent)
    jittered = nominal * (1.0 + rng.uniform(-jitter, jitter))
    return min(cap_s, max(0.0, jittered))


class RestartBudget:
    """At most ``max_per_hour`` restarts of one channel within a trailing window."""

    def __init__(self, max_per_hour: int = 10, window_s: float = 3600.0) -> None:
        if max_per_hour < 1:
            raise ValueError(f"max_per_hour must be >= 1, got {max_per_hour!r}")
        if not (math.isfinite(window_s) and window_s > 0):
            raise ValueError(f"window_s must be finite and > 0, got {window_s!r}")
        self.max_per_hour = max_per_hour
        self.window_s = window_s
        # Only the newest max_per_hour restarts can decide whether the budget is spent.
        self._events: deque[float] = deque(maxlen=max_per_hour)

    def _prune(self, now: float) -> None:
        cutoff = now - self.window_s
        while self._events and self._events[0] <= cutoff:
            self._events.popleft()

    def count(self, now: float) -> int:
        """Restarts recorded within the window ending at ``now``."""
        self._prune(now)
        return len(self._events)

    def allow(self, now: float) -> bool:
        """Whether one more restart fits in the budget."""
        return self.count(now) < self.max_per_hour

    def record(self, now: float) -> None:
        """Record a restart that actually happened."""
        self._prune(now)
        self._events.append(now)

    def reset(self) -> None:
        """Forget history, e.g. after the channel has been healthy for a while."""
        self._events.clear()


class FleetBreaker:
    """Trips on a fleet-wide restart storm or when too many channels fail at once.

    While tripped the supervisor holds restarts; held restarts are not recorded, so the
    breaker re-arms after ``cooldown_s`` with a clean history. After a re-arm, the failing
    fraction cannot re-trip the breaker until a restart has been let through: channels held
    during the cooldown are still failing and would otherwise re-trip it forever.
    """

    def __init__(
        self, restarts_per_hour: int = 40, failing_fraction: float = 0.5, cooldown_s: float = 120.0
    ) -> None:
        if restarts_per_hour < 1:
            raise ValueError(f"restarts_per_hour must be >= 1, got {restarts_per_hour!r}")
        if not 0.0 < failing_fraction <= 1.0:
            raise ValueError(f"failing_fraction must be in (0, 1], got {failing_fraction!r}")
        if not (math.isfinite(cooldown_s) and cooldown_s >= 0):
            raise ValueError(f"cooldown_s must be finite and >= 0, got {cooldown_s!r}")
        self.restarts_per_hour = restarts_per_hour
        self.failing_fraction = failing_fraction
        self.cooldown_s = cooldown_s
        self._window_s = 3600.0
        self._events: deque[float] = deque(maxlen=restarts_per_hour)
        self._tripped_until: float | None = None
        self._state_armed = True

    def _trip(self, now: float) -> None:
        self._tripped_until = now + self.cooldown_s

    def note_restart(self, now: float) -> bool:
        """Record a restart; True when the breaker is (or just became) tripped.

        A restart refused because the breaker is tripped is not recorded.
        """
        if self.tripped(now):
            return True
        self._state_armed = True
        cutoff = now - self._window_s
        while self._events and self._events[0] <= cutoff:
            self._events.popleft()
        self._events.append(now)
        if len(self._events) >= self.restarts_per_hour:
            self._trip(now)
            return True
        return False

    def note_fleet_state(self, failing: int, total: int, now: float) -> bool:
        """Trip when ``failing / total`` reaches the threshold; True while tripped.

        An active trip is not extended, so a cooldown always ends on schedule.
        """
        if self.tripped(now):
            return True
        if total <= 0 or not self._state_armed:
            return False
        fraction = min(max(failing, 0), total) / total
        if fraction >= self.failing_fraction:
            self._trip(now)
            return True
        return False

    def tripped(self, now: float) -> bool:
        """Whether restarts are held at ``now``; an expired trip re-arms with history cleared."""
        if self._tripped_until is None:
            return False
        if now < self._tripped_until:
            return True
        self._tripped_until = None
        self._events.clear()
        self._state_armed = False
        return False

    def tripped_until(self) -> float | None:
        """End of the current (or last unobserved) cooldown, None when not tripped."""
        return self._tripped_until

    def reset(self) -> None:
        """Clear history and any trip (operator-driven recovery)."""
        self._events.clear()
        self._tripped_until = None
        self._state_armed = True
