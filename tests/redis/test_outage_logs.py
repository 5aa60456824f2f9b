"""A Redis outage under a running gateway is a few log lines, not a wall of tracebacks: one line
per failing component when it breaks, a rate-limited reminder while it stays down, one line when
it recovers. The web chat channel (it subscribes to Redis) runs too."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path

import aiohttp
import pytest

from chatgate.model.errors import StateUnavailable
from chatgate.schedules.feature import Schedules
from chatgate.state.outage import OutageReporter
from chatgate.takeover.feature import TakeoverFeature
from tests.fakes.clock import ManualClock
from tests.harness import memory, running, url, write_config
from tests.redis.conftest import PrivateRedis
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis
OUTAGE_S = 3.0  # every loop fails at least once (heartbeat 0.5 s, adoption 1 s, pairing 2 s)
POLL_S = 15.0  # the schedule tick and the pause check (on Redis)
MAX_LINES = 12  # measured: 5 components, one line each when they break and recover
RECOVERED = (
    "pairing notifier recovered",
    "replica heartbeat recovered",
    "web chat relay restored",
    "state is writable again",
)


def gateway_config(tmp_path: Path, url: str) -> Path:
    return write_config(
        tmp_path,
        f"""  store: {{backend: redis, url: '{url}', key_prefix: 'ol:'}}
  turn_lock: {{backend: redis}}
  redis: {{replica_id: r1, lease_ttl_s: 2}}
agents:
  default: {{backend: echo}}
channels:
  memory: {{dm_policy: open}}
  webchat: {{auth: open, dm_policy: open}}
""",
    )


async def test_a_redis_outage_logs_a_handful_of_lines_and_no_traceback(
    tmp_path: Path, private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture
) -> None:
    jar = aiohttp.CookieJar(unsafe=True)
    async with (
        running(gateway_config(tmp_path, private_redis.url)) as gw,
        aiohttp.ClientSession(cookie_jar=jar) as browser,
    ):
        async with browser.post(url(gw, "/chat/api/session"), json={}) as r:
            assert r.status == 200
        await asyncio.sleep(1.0)
        caplog.clear()
        caplog.set_level(logging.INFO, logger="chatgate")
        private_redis.kill()
        with pytest.raises(StateUnavailable):  # not journaled: the platform keeps it
            await memory(gw).inject("during", message_id="m1")
        ready, detail = gw.readiness()
        # Every replica shares this outage: each stays in the Service and answers 503 itself.
        assert ready and detail["status"] == "degraded"
        async with browser.get(url(gw, "/chat/api/events")) as r:  # the page retries
            assert r.status == 503 and r.headers["Retry-After"].isdigit()
        await asyncio.sleep(OUTAGE_S)
        private_redis.start()
        for _ in range(200):  # every loop has run again and said it recovered
            said = " ".join(r.getMessage() for r in caplog.records)
            if all(line in said for line in RECOVERED):
                break
            await asyncio.sleep(0.05)
        records = [r for r in caplog.records if r.levelno >= logging.INFO]
    lines = [f"{r.levelname} {r.name}: {r.getMessage()}" for r in records]
    assert [r.getMessage() for r in records if r.exc_info] == []
    assert len(lines) <= MAX_LINES, "\n".join(lines)
    said = "\n".join(lines)
    assert all(line in said for line in RECOVERED), said
    assert "replica heartbeat failing; retrying quietly" in said
    assert "INFO chatgate.state: state is writable again" in said, said


def failed_at_least(reporters: list[OutageReporter], count: int) -> bool:
    return all(r.state.failures >= count for r in reporters)


async def ticked(clock: ManualClock, done: Callable[[], bool]) -> None:
    """Advance the clock by one poll, then a second at a time until ``done`` (a loop that was
    not asleep yet when the clock moved sleeps from a later instant)."""
    clock.advance(POLL_S - 1.0)
    for _ in range(100):
        clock.advance(1.0)
        try:
            await eventually(done, timeout=0.2)
            return
        except AssertionError:
            continue
    raise AssertionError("the loops did not run")


async def test_schedule_tick_and_pause_check_say_an_outage_once_a_minute_and_its_end(
    tmp_path: Path, private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_config(
        tmp_path,
        f"""  store: {{backend: redis, url: '{private_redis.url}', key_prefix: 'ot:'}}
  redis: {{replica_id: r1}}
agents:
  default: {{backend: echo}}
channels:
  memory: {{dm_policy: open}}
schedules:
  hourly: {{cron: "0 * * * *", prompt: "report", deliver: {{to: "memory:ops"}}}}
""",
    )
    clock = ManualClock()
    async with running(path, clock=clock) as gw:
        reporters = [
            gw.feature(Schedules).scheduler.outage,
            gw.feature(TakeoverFeature).service.outage,
        ]
        caplog.set_level(logging.INFO, logger="chatgate")
        private_redis.kill()
        for step in range(1, 7):  # 90 s of outage, both loops poll every 15 s
            await ticked(clock, partial(failed_at_least, reporters, step))
        private_redis.start()
        await ticked(clock, lambda: not any(r.down for r in reporters))
    said = [
        (r.levelname, r.getMessage())
        for r in caplog.records
        if r.name in ("chatgate.schedules", "chatgate.takeover")
    ]
    for what in ("schedule tick", "pause check"):
        assert [line for line in said if line[1].startswith(what)] == [
            ("WARNING", f"{what} failing; retrying quietly"),
            ("WARNING", f"{what} still failing"),
            ("INFO", f"{what} recovered"),
        ], said
