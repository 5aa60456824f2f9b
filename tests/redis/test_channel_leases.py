"""Exclusive channel connections across two in-process replicas on one Redis."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.channels.descriptor import ChannelDescriptor
from chatgate.channels.registry import ChannelRegistry
from chatgate.config.loader import load_config
from chatgate.gateway.app import Gateway
from chatgate.gateway.builder import GatewayBuilder
from chatgate.policies.channel_states import ChannelState
from tests.fakes.llm import FakeLLM
from tests.fakes.memory_channel import MemoryChannel, MemoryChannelConfig
from tests.harness import fake_agent, write_config
from tests.redis.replicas_support import redis_lines
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis
TTL_S = 0.6
LEASE = "memory:the-one-connection"


def registry() -> ChannelRegistry:
    reg = ChannelRegistry()
    reg.register(
        "memory",
        ChannelDescriptor(
            platform="memory",
            config_model=MemoryChannelConfig,
            adapter="tests.fakes.memory_channel:MemoryChannel",
            exclusive=lambda section: LEASE,
        ),
    )
    return reg


@contextlib.asynccontextmanager
async def replica(
    directory: Path, url: str, name: str, llm: FakeLLM | None = None, ttl_s: float = TTL_S
) -> AsyncIterator[Gateway]:
    """Replica `name` with the exclusive memory channel; with `llm`, an agent on that model."""
    agent = f"{fake_agent(llm, 'sk-test', 30)}\n" if llm is not None else ""
    path = write_config(
        directory,
        redis_lines(url, name, ttl_s) + agent + "channels:\n  memory: {dm_policy: open}\n",
    )
    reg = registry()
    gateway = GatewayBuilder(load_config(path, env={}, catalog=reg)).registry(reg).build()
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


def state(gateway: Gateway) -> ChannelState:
    return gateway.channels.statuses["memory"].state


async def test_one_replica_runs_the_exclusive_channel_and_a_standby_takes_over(
    tmp_path: Path, redis_db: str
) -> None:
    client = Redis.from_url(redis_db, decode_responses=True)
    async with replica(tmp_path / "a", redis_db, "a") as a:
        async with replica(tmp_path / "b", redis_db, "b") as b:
            await eventually(lambda: state(b) is ChannelState.STANDBY, what="b in standby")
            assert state(a) is ChannelState.RUNNING
            status = await b.status()
            assert status["cluster"]["replica"] == "b" and status["cluster"]["owned"] == []
            assert status["cluster"]["peers"] == ["a"]
            assert (await a.status())["cluster"]["owned"] == [LEASE]
            assert b.readiness() == (True, {"status": "ready", "standby": ["memory"]})
            assert a.readiness() == (True, {"status": "ready"})
            # a loses its lease (as after a pause past the TTL): it stops, b takes over
            await client.set(f"chatgate:lease:{LEASE}", "someone-else", px=int(TTL_S * 1000))
            await eventually(lambda: state(a) is ChannelState.STANDBY, what="a stopped polling")
            # once that lease runs out, exactly one replica picks the connection up again

            def running() -> list[Gateway]:
                return [g for g in (a, b) if state(g) is ChannelState.RUNNING]

            await eventually(lambda: len(running()) == 1, what="one replica took over")
            holder = await client.get(f"chatgate:lease:{LEASE}")
            assert holder == running()[0].rt.state.leases.replica
            assert [state(g) for g in (a, b)].count(ChannelState.STANDBY) == 1
        # b stops gracefully (releasing the lease if it had it): a runs the channel
        await eventually(lambda: state(a) is ChannelState.RUNNING, what="a runs it alone")
    assert await client.keys("chatgate:lease:*") == []
    assert await client.keys("chatgate:replica:*") == []
    await client.aclose()


async def test_a_lease_lost_during_a_slow_start_stops_the_channel_after_it(
    tmp_path: Path, redis_db: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The start outlasts the lease's validity (a loaded machine): the channel must not run on
    without a lease (a second poller) once the start returns; it goes back to standby."""
    client = Redis.from_url(redis_db, decode_responses=True)
    key = f"chatgate:lease:{LEASE}"
    async with replica(tmp_path / "a", redis_db, "a") as a:
        await eventually(lambda: state(a) is ChannelState.RUNNING, what="a running")
        adapter = a.channels.adapters["memory"]
        assert isinstance(adapter, MemoryChannel)
        adapter.start_gate = asyncio.Event()
        await a.channels.restart("memory")
        await eventually(lambda: adapter.started == 2, what="a starting again")
        caplog.set_level(logging.ERROR, logger="chatgate.leases")
        await client.set(key, "someone-else", px=60_000)  # lost while the start hangs
        await eventually(lambda: "lost to another replica" in caplog.text, what="the loss seen")
        adapter.start_gate.set()
        await eventually(lambda: state(a) is ChannelState.STANDBY, what="a back in standby")
        assert await client.get(key) == "someone-else"
    await client.aclose()
