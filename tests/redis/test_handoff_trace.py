"""A message handed to another replica mid-turn is traced there too: the adopting replica's
trace links to the one the message's intake began (its traceparent journaled in Redis), so a
trace backend leads from either to the other."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.config.loader import load_config
from chatgate.gateway.app import Gateway
from chatgate.gateway.builder import GatewayBuilder
from chatgate.model.reasons import DeliveryStatus
from chatgate.policies.channel_states import ChannelState
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.otlp_receiver import OtlpReceiver
from tests.harness import fake_agent, memory, write_config
from tests.redis.replicas_support import redis_lines
from tests.redis.test_channel_leases import LEASE, TTL_S, registry, state
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis


@contextlib.asynccontextmanager
async def replica(
    directory: Path, url: str, name: str, llm: FakeLLM, telemetry: str = ""
) -> AsyncIterator[Gateway]:
    body = (
        redis_lines(url, name, TTL_S)
        + f"{fake_agent(llm, 'sk-test', 30)}\n"
        + "channels:\n  memory: {dm_policy: open}\n"
        + telemetry
    )
    reg = registry()
    gateway = GatewayBuilder(load_config(write_config(directory, body), env={}, catalog=reg))
    built = gateway.registry(reg).build()
    await built.start()
    try:
        yield built
    finally:
        await built.stop()


async def test_the_replica_a_message_is_handed_to_links_to_its_first_trace(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> None:
    fake_llm.fail_next(Fault.hang())
    client = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with OtlpReceiver() as receiver:
            # tracing is per process: a's export carries what both replicas record
            telemetry = f"telemetry: {{otlp_endpoint: {receiver.base_url}}}\n"
            async with (
                replica(tmp_path / "a", redis_db, "a", fake_llm, telemetry) as a,
                replica(tmp_path / "b", redis_db, "b", fake_llm) as b,
            ):
                await eventually(lambda: state(b) is ChannelState.STANDBY, what="standby")
                submission = await memory(a).inject("hello", message_id="m1")
                await fake_llm.wait_for_requests(1, timeout=30)
                journaled = await a.rt.journal.get(submission.key)
                # a stalls past its lease and b takes the connection over
                await client.set(f"chatgate:lease:{LEASE}", "b", px=60_000)
                await eventually(lambda: state(b) is ChannelState.RUNNING, what="b runs")
                await eventually(lambda: state(a) is ChannelState.STANDBY, what="a stands by")
                fake_llm.release()
                result = await asyncio.wait_for(submission.result, 30)
                assert result.delivery == DeliveryStatus.HANDED_OFF.value
                await memory(b).wait_sent(1, timeout=30)
                assert await b.pipeline.scheduler.wait_idle(10)
    finally:
        await client.aclose()
    assert journaled is not None and "trace_parent" in journaled.message.extra

    roots = [
        s
        for s in receiver.named("memory message")
        if s.attributes.get("messaging.message.id") == "m1"
    ]
    [first] = [r for r in roots if not r.attributes.get("chatgate.resumed")]
    assert journaled.message.extra["trace_parent"].split("-")[1:3] == [
        first.trace_id,
        first.span_id,
    ]
    # b resumed it (and, on a busy machine, a's own resume may have too): every such trace is
    # a new one linked to the first
    adopted = [r for r in roots if r.attributes.get("chatgate.resumed")]
    assert adopted
    for root in adopted:
        assert root.trace_id != first.trace_id and root.parent_id == ""
        assert root.links == [(first.trace_id, first.span_id)]
    # b's sending is in a linked trace (a re-delivery, or the resumed turn when a busy machine
    # let a's lease lapse and b adopted the message as a dead replica's)
    linked = {root.trace_id for root in adopted}
    sending = {s.name for s in receiver.spans if s.trace_id in linked}
    assert sending & {"chatgate.redeliver", "chatgate.turn"}
