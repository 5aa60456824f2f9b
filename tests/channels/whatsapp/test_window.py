"""The 24-hour window (local copy + shared store) and the template that stands in outside it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from chatgate.channels.whatsapp.config import TemplateConfig
from chatgate.channels.whatsapp.window import (
    MARGIN_S,
    STORE_EVERY_S,
    WINDOW_S,
    Windows,
    is_open,
    template_payload,
)
from tests.fakes.clock import ManualClock

HOUR = 3600.0


@pytest.mark.parametrize(
    ("last", "now", "open_"),
    [
        (None, 0.0, False),
        (0.0, 1.0, True),
        (0.0, 23 * HOUR, True),
        (0.0, WINDOW_S - 30, False),
        (0.0, 25 * HOUR, False),
    ],
)
def test_is_open(last: float | None, now: float, open_: bool) -> None:
    assert is_open(last, now) is open_


class DictFacts:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}
        self.reads = 0

    async def put(
        self, channel: str, key: str, value: dict[str, Any], now: float, ttl_s: float
    ) -> None:
        self.rows[(channel, key)] = value

    async def get_many(
        self, channel: str, keys: Sequence[str], now: float
    ) -> dict[str, dict[str, Any]]:
        self.reads += 1
        return {k: self.rows[(channel, k)] for k in keys if (channel, k) in self.rows}


async def test_a_reply_needs_no_read_and_another_replica_reads_the_store() -> None:
    clock, facts = ManualClock(), DictFacts()
    here, there = Windows("wa", facts, clock), Windows("wa", facts, clock)
    await here.heard("1555", clock.time() - HOUR)
    assert await here.is_open("1555") and facts.reads == 0
    assert await there.is_open("1555") and facts.reads == 1
    clock.advance(23.5 * HOUR)
    assert not await there.is_open("1555")
    assert not await Windows("wa", None, clock).is_open("1555")


async def test_a_future_timestamp_counts_as_now_and_closed_forgets_the_copy() -> None:
    clock, facts = ManualClock(), DictFacts()
    windows = Windows("wa", facts, clock)
    await windows.heard("1555", clock.time() + 10 * HOUR)
    assert facts.rows[("wa", "window:1555")] == {"at": clock.time()}
    windows.closed("1555")
    assert await windows.is_open("1555") and facts.reads == 1  # the store still says open


def test_template_parameters_are_one_clipped_line() -> None:
    template = TemplateConfig(name="update", language="en", parameters=["{text}", "fixed"])
    payload = template_payload(template, "line one\n\n\tline two" + " x" * 700)
    body = payload["template"]
    assert body["name"] == "update" and body["language"] == {"code": "en"}
    first, second = body["components"][0]["parameters"]
    assert first["text"].startswith("line one line two x") and len(first["text"]) == 1024
    assert "\n" not in first["text"] and first["text"].endswith("…")
    assert second == {"type": "text", "text": "fixed"}
    bare = template_payload(TemplateConfig(name="ping", parameters=[]), "hi")
    assert "components" not in bare["template"]


class CountingFacts(DictFacts):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    async def put(
        self, channel: str, key: str, value: dict[str, Any], now: float, ttl_s: float
    ) -> None:
        self.writes += 1
        await super().put(channel, key, value, now, ttl_s)


async def test_a_burst_writes_the_window_once_and_the_store_only_closes_it_early() -> None:
    """A user's messages within STORE_EVERY_S of the stored time are not written again; the
    store then lags by less than that, so a restarted replica sees the window close early
    (by at most STORE_EVERY_S), never late."""
    clock, facts = ManualClock(), CountingFacts()
    clock.advance(HOUR)
    windows = Windows("wa", facts, clock)
    first = clock.time()
    for _ in range(5):
        await windows.heard("1555", clock.time())
        clock.advance(STORE_EVERY_S / 10)
    last = clock.time() - STORE_EVERY_S / 10
    assert facts.writes == 1 and facts.rows[("wa", "window:1555")] == {"at": first}
    await windows.heard("1444", clock.time())  # another user: its own write
    assert facts.writes == 2
    clock.advance(WINDOW_S - MARGIN_S - (clock.time() - first) - 1)
    assert await Windows("wa", facts, clock).is_open("1555")  # a restart, just before
    clock.advance(2)
    assert not await Windows("wa", facts, clock).is_open("1555")  # early, by < STORE_EVERY_S
    assert await windows.is_open("1555")  # the replica that heard the last message knows
    assert (last + WINDOW_S - MARGIN_S) - clock.time() < STORE_EVERY_S
    clock.advance(HOUR)
    await windows.heard("1555", clock.time())  # later than STORE_EVERY_S: written again
    assert facts.writes == 3 and facts.rows[("wa", "window:1555")] == {"at": clock.time()}
