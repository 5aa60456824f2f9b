"""`chatgate status` for humans: breaker and memory lines say what the operator needs to act."""

from __future__ import annotations

from typing import Any

import pytest

from chatgate.cli.status_cmd import render

MIB = 1024 * 1024
ARMED = {"tripped": False, "until": None, "restarts_per_hour": 40, "failing_fraction": 0.5}


def snapshot(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "version": "0.1.0",
        "ready": True,
        "uptime_s": 5,
        "http": {"host": "127.0.0.1", "port": 8765},
        "channels": [],
        "breaker": ARMED,
        "memory": {"rss_bytes": 100 * MIB, "limit_bytes": None, "ratio": None, "evictions": 0},
    }
    return base | overrides


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, "fleet breaker: armed (trips at 40 restarts/h or 50% of channels failing)"),
        ({"breaker": ARMED | {"tripped": True, "until": 0.0}}, "fleet breaker: TRIPPED until"),
        (
            {},
            "memory: rss 100.0 MiB (no limit found: cgroup or gateway.memory.limit_mb), "
            "0 warm sessions evicted",
        ),
        (
            {
                "memory": {
                    "rss_bytes": 960 * MIB,
                    "limit_bytes": 1000 * MIB,
                    "ratio": 0.96,
                    "shedding": True,
                    "evictions": 12,
                }
            },
            "memory: rss 960.0 MiB of 1000.0 MiB (96%), SHEDDING new turns, "
            "12 warm sessions evicted",
        ),
        (
            {
                "memory": {
                    "rss_bytes": 500 * MIB,
                    "limit_bytes": 1000 * MIB,
                    "ratio": 0.5,
                    "evictions": 0,
                }
            },
            "memory: rss 500.0 MiB of 1000.0 MiB (50%), 0 warm sessions evicted",
        ),
        (
            {"event_loop": {"implementation": "uvloop", "lag_s": 0.0012, "max_lag_s": 2.0}},
            "event loop: uvloop, lag 0.001 s (limit 2.0 s)",
        ),
        (
            {
                "event_loop": {
                    "implementation": "asyncio",
                    "lag_s": 3.5,
                    "max_lag_s": 2.0,
                    "healthy": False,
                }
            },
            "event loop: asyncio, lag 3.500 s (limit 2.0 s), UNHEALTHY",
        ),
    ],
)
def test_status_lines(overrides: dict[str, Any], expected: str) -> None:
    lines = render(snapshot(**overrides)).splitlines()
    assert any(line.startswith(expected) for line in lines), lines


def test_adapter_summary_and_last_error_are_shown_under_the_channel() -> None:
    channel = {
        "name": "discord",
        "state": "running",
        "since": 0,
        "summary": "@bot · 1 shard · 2 guilds · latency 40 ms",
        "last_error": {"error": "send failed: forbidden", "hint": "give the bot access", "at": 0},
    }
    lines = render(snapshot(channels=[channel])).splitlines()
    at = lines.index("    @bot · 1 shard · 2 guilds · latency 40 ms")
    assert lines[at + 1].startswith("    last error at ") and lines[at + 1].endswith(
        ": send failed: forbidden"
    )
    assert lines[at + 2] == "    fix: give the bot access"
