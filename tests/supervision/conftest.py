"""Every supervision scenario here also checks that each state change it caused is in the
channel transition table (the ladder logs one that is not, and applies it anyway)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.moves: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == "channel transition not in the table":
            self.moves.append(f"{getattr(record, 'from', '?')} --{getattr(record, 'event', '?')}")


@pytest.fixture(autouse=True)
def transitions_in_table() -> Iterator[None]:
    handler = _Collect()
    logger = logging.getLogger("chatgate.supervisor")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
    assert not handler.moves, f"channel moves missing from the table: {handler.moves}"
