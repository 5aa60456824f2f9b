"""`log_fields`: the daemon's line without a LogRecord, the same line as `logger.log` writes."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from chatgate.gateway.logs import LogSetup, log_fields, setup_logging

SECRET = "hook-secret-0123456789"
FIELDS = {"channel": "webhook", "key": f"webhook:{SECRET}", "model": None, "agent_ms": 0.1,
          "messages": 2, "final": True, "chat": 'a "quoted"\nä→\x00', "big": 10**20,
          "never": float("nan"), "ids": ["1", 2], "when": 1e-7}  # fmt: skip


class Counting(logging.Logger):
    """A logger that counts the records it makes (the standard logger's own hook)."""

    made = 0

    def makeRecord(self, *args: object, **kwargs: object) -> logging.LogRecord:
        Counting.made += 1
        return super().makeRecord(*args, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(params=["json", "text"])
def daemon(request: pytest.FixtureRequest) -> Iterator[tuple[LogSetup, io.StringIO]]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    stream = io.StringIO()
    setup = setup_logging("info", request.param, [SECRET], stream=stream)
    yield setup, stream
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


def _logger(setup: LogSetup) -> Counting:
    """A logger whose only handler is the daemon's (pytest's own capture sits on the root)."""
    logger = Counting("chatgate.test.fields")
    logger.parent, logger.propagate = logging.getLogger(), False
    logger.addHandler(setup.handler)
    logger.setLevel(logging.INFO)
    return logger


def _lines(setup: LogSetup, stream: io.StringIO) -> list[str]:
    setup.stop()
    return [_without_time(line) for line in stream.getvalue().split("\n") if line]


def _without_time(line: str) -> str:
    return line.split(",", 1)[1] if line.startswith('{"ts"') else line.split(" ", 1)[1]


def test_the_line_is_the_records_line_and_no_record_is_made(
    daemon: tuple[LogSetup, io.StringIO],
) -> None:
    setup, stream = daemon
    logger = _logger(setup)
    logger.info("turn", extra=dict(FIELDS))
    made = Counting.made
    log_fields(logger, logging.INFO, "turn", FIELDS)
    assert Counting.made == made
    first, second = _lines(setup, stream)
    assert first == second
    assert SECRET not in second and "webhook" in second


@pytest.mark.parametrize(
    "fields",
    [{"agent_ms": float("inf")},
     {"when": -0.0, "n": -3, "t": "\u2028\ud800"}, {}],
)  # fmt: skip
def test_any_fields_give_the_records_line(
    daemon: tuple[LogSetup, io.StringIO], fields: dict[str, object]
) -> None:
    setup, stream = daemon
    logger = _logger(setup)
    logger.info("turn", extra=dict(fields))
    log_fields(logger, logging.INFO, "turn", fields)
    first, second = _lines(setup, stream)
    assert first == second


def test_another_handler_gets_the_record_as_before(
    daemon: tuple[LogSetup, io.StringIO], caplog: pytest.LogCaptureFixture
) -> None:
    setup, stream = daemon
    logger = _logger(setup)
    logger.removeHandler(setup.handler)
    logger.propagate = True  # to the root: the daemon's handler and pytest's capture
    with caplog.at_level(logging.INFO):
        log_fields(logger, logging.INFO, "turn", FIELDS)
    assert [r.getMessage() for r in caplog.records] == ["turn"]
    assert caplog.records[0].channel == "webhook"  # type: ignore[attr-defined]
    assert len(_lines(setup, stream)) == 1


def test_below_the_level_nothing_is_written(daemon: tuple[LogSetup, io.StringIO]) -> None:
    setup, stream = daemon
    log_fields(_logger(setup), logging.DEBUG, "turn", FIELDS)
    assert _lines(setup, stream) == []
