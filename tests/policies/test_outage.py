"""When an outage is worth a log line: once on break, a reminder per `remind_s`, once on recovery."""

from __future__ import annotations

import logging

import pytest

from chatgate.policies.outage import OutageEvent, OutageState, on_failure, on_success
from chatgate.state.outage import OutageReporter

REMIND = 60.0


@pytest.mark.parametrize(
    ("state", "now", "event", "after"),
    [
        (OutageState(), 5.0, OutageEvent.BROKE, OutageState(5.0, 1, 5.0)),
        (OutageState(5.0, 1, 5.0), 7.0, None, OutageState(5.0, 2, 5.0)),
        (OutageState(5.0, 9, 5.0), 64.9, None, OutageState(5.0, 10, 5.0)),
        (OutageState(5.0, 9, 5.0), 65.0, OutageEvent.STILL_DOWN, OutageState(5.0, 10, 65.0)),
        (OutageState(5.0, 30, 65.0), 100.0, None, OutageState(5.0, 31, 65.0)),
    ],
)
def test_failures(
    state: OutageState, now: float, event: OutageEvent | None, after: OutageState
) -> None:
    assert on_failure(state, now, REMIND) == (after, event)


@pytest.mark.parametrize(
    ("state", "event"),
    [(OutageState(), None), (OutageState(5.0, 3, 5.0), OutageEvent.RECOVERED)],
)
def test_successes(state: OutageState, event: OutageEvent | None) -> None:
    assert on_success(state) == (OutageState(), event)


def test_a_thirty_second_outage_is_two_lines_and_an_unexpected_error_one_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    reporter = OutageReporter(logging.getLogger("chatgate.t"), "poller", now=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="chatgate.t"):
        for _ in range(15):  # every 2 s for 30 s
            reporter.failed(ConnectionError("refused"))
            now[0] += 2.0
        reporter.ok()
        reporter.ok()
        reporter.failed(KeyError("surprise"))
        for _ in range(40):  # two minutes more: one reminder per minute
            now[0] += 3.0
            reporter.failed(KeyError("surprise"))
    said = [(r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert said == [
        ("poller failing; retrying quietly", False),
        ("poller recovered", False),
        ("poller failing; retrying quietly", True),  # not an expected error: traced once
        ("poller still failing", False),
        ("poller still failing", False),
    ]
    assert caplog.records[1].failures == 15  # type: ignore[attr-defined]
