"""Edit throttling as the far side sees it, without trusting wall-clock gaps on a loaded box."""

from __future__ import annotations

from collections.abc import Sequence


def assert_spaced(arrivals: Sequence[float], interval: float) -> None:
    """The sender awaits each call before the next and decides them ``interval`` apart on its own
    clock, so call i+1 was decided after call i-1 arrived, and arrived ``interval`` or more after
    it. Adjacent arrival gaps can shrink under load (one call delivered late); these cannot."""
    assert len(arrivals) >= 3, arrivals
    spans = [later - earlier for earlier, later in zip(arrivals, arrivals[2:], strict=False)]
    assert min(spans) >= interval, spans
