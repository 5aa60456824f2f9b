"""Readiness follows a Redis outage within seconds, with no traffic: the gateway pings the store
on its data pool (bounded by the injected clock), and the state probe clears it on recovery."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from chatgate.gateway.app import Gateway
from chatgate.gateway.intake.state_guard import PING_EVERY_S, PING_TIMEOUT_S, PROBE_EVERY_S
from tests.fakes.clock import ManualClock
from tests.harness import running, write_config
from tests.redis.conftest import PrivateRedis
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis


def config(tmp_path: Path, url: str) -> Path:
    return write_config(
        tmp_path,
        f"""  store: {{backend: redis, url: '{url}', key_prefix: 'sp:'}}
  redis: {{replica_id: r1}}
agents:
  default: {{backend: echo}}
channels:
  memory: {{dm_policy: open}}
""",
    )


def status(gw: Gateway) -> str:
    return str(gw.readiness()[1]["status"])


async def advance_until(clock: ManualClock, gw: Gateway, wanted: str, most_s: float) -> float:
    """Move the clock half a second at a time until readiness says ``wanted``; the seconds it took."""
    moved = 0.0
    while status(gw) != wanted:
        assert moved < most_s, f"still {status(gw)!r} after {moved} s"
        clock.advance(0.5)
        moved += 0.5
        try:
            await eventually(lambda: status(gw) == wanted, timeout=0.05)
        except AssertionError:
            continue
    return moved


@pytest.mark.parametrize("outage", ["killed", "not answering"])
async def test_readiness_says_degraded_within_seconds_of_a_redis_outage(
    tmp_path: Path, private_redis: PrivateRedis, outage: str
) -> None:
    clock = ManualClock()
    async with running(config(tmp_path, private_redis.url), clock=clock) as gw:
        assert status(gw) == "ready"
        assert private_redis.proc is not None
        if outage == "killed":
            private_redis.kill()
        else:
            private_redis.proc.send_signal(signal.SIGSTOP)
        try:
            took = await advance_until(clock, gw, "degraded", 10.0)
            assert took <= PING_EVERY_S + PING_TIMEOUT_S + 1.0  # a step or two of slack
            ready, detail = gw.readiness()
            assert ready  # a shared store fails for every replica: each answers its own 503
            [owner] = detail["degraded"]
            assert "store ping failed" in owner["reason"]
        finally:
            if outage == "killed":
                private_redis.start()
            else:
                private_redis.proc.send_signal(signal.SIGCONT)
        await advance_until(clock, gw, "ready", 5 * PROBE_EVERY_S)
