"""A replica that loses an exclusive channel while a turn runs, or while its send is failing on
the stopping connection, hands the answer to the replica now holding it: sent once, there, and
not dead-lettered; so is an answer made after the connection left (a command taken in as it
went). A dead letter for such a channel is
replayed by its holder; a standby replica says so instead of using the entry up."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.gateway.app import Gateway
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import SendResult, Target
from chatgate.model.reasons import DeliveryStatus, SendErrorKind
from chatgate.model.results import Submission
from chatgate.policies.channel_states import ChannelState
from chatgate.state.records import JournalState
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.tcp_proxy import TcpProxy
from tests.harness import memory
from tests.redis.test_channel_leases import LEASE, replica, state
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis


@contextlib.asynccontextmanager
async def a_turn_at_the_model(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> AsyncIterator[tuple[Gateway, Gateway, Submission, Redis]]:
    """Replica a holding the channel, b in standby, and a turn of a's held at the model (until
    ``fake_llm.release()``); with a client on their Redis."""
    fake_llm.fail_next(Fault.hang())
    async with holder_and_standby(tmp_path, redis_db, fake_llm) as (a, b, client):
        submission = await memory(a).inject("hello", message_id="m1")
        await fake_llm.wait_for_requests(1, timeout=30)
        yield a, b, submission, client


@contextlib.asynccontextmanager
async def holder_and_standby(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> AsyncIterator[tuple[Gateway, Gateway, Redis]]:
    """Replica a holding the channel and b in standby, with a client on their Redis."""
    client = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with (
            replica(tmp_path / "a", redis_db, "a", fake_llm) as a,
            replica(tmp_path / "b", redis_db, "b", fake_llm) as b,
        ):
            await eventually(lambda: state(b) is ChannelState.STANDBY, what="b in standby")
            yield a, b, client
    finally:
        await client.aclose()


async def sent_once_by_b(a: Gateway, b: Gateway, submission: Submission, llm: FakeLLM) -> None:
    result = await asyncio.wait_for(submission.result, 30)
    assert result.delivery == DeliveryStatus.HANDED_OFF.value
    await memory(b).wait_sent(1, timeout=30)
    assert len(memory(b).texts()) == 1 and memory(a).texts() == []
    assert await a.rt.dead_letters.count() == 0, "dead-lettered instead of handed off"
    assert len(llm.requests) == 1, "the answer was produced again"
    entry = await b.rt.journal.get(result.key)
    assert entry is not None and entry.delivery == DeliveryStatus.SENT.value


async def test_an_answer_for_a_channel_lost_mid_turn_is_sent_by_its_new_holder(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> None:
    async with a_turn_at_the_model(tmp_path, redis_db, fake_llm) as (a, b, submission, client):
        # a stalls past its lease (as on a busy loop) and b takes the connection over
        await client.set(f"chatgate:lease:{LEASE}", "b", px=60_000)
        await eventually(lambda: state(a) is ChannelState.STANDBY, what="a lost the channel")
        await eventually(lambda: state(b) is ChannelState.RUNNING, what="b runs it")
        fake_llm.release()  # the turn on a produces its answer now
        await sent_once_by_b(a, b, submission, fake_llm)


async def test_a_send_retried_while_the_lease_moves_is_handed_to_the_new_holder(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> None:
    async with a_turn_at_the_model(tmp_path, redis_db, fake_llm) as (a, b, submission, client):
        # a's client is closing under it: every send fails as a network error would
        memory(a).failures.extend(
            [SendResult.failed(SendErrorKind.TRANSIENT, "connection closed")] * 20
        )
        fake_llm.release()
        await eventually(lambda: memory(a).send_attempts >= 1, what="a's first send")
        await client.set(f"chatgate:lease:{LEASE}", "b", px=60_000)  # b takes over
        await sent_once_by_b(a, b, submission, fake_llm)
        assert memory(a).send_attempts < 5, "kept retrying a channel it no longer serves"


async def test_a_standby_replica_leaves_a_dead_letter_to_the_channels_holder(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> None:
    async with (
        replica(tmp_path / "a", redis_db, "a", fake_llm) as a,
        replica(tmp_path / "b", redis_db, "b", fake_llm) as b,
    ):
        await eventually(lambda: state(b) is ChannelState.STANDBY, what="b in standby")
        message = {"blocks": [{"type": "text", "text": "late answer"}]}
        entry_id = await b.rt.dead_letters.add(
            Target("memory", "c1"), message, SendErrorKind.TRANSIENT, "down", 3, 1.0
        )
        refused = await b.replay_dead_letter(entry_id)
        assert refused["status"] == "standby" and refused["holders"] == {LEASE: "a"}
        assert "replay it there" in refused["hint"]
        assert await b.rt.dead_letters.count() == 1, "the entry was used up on the wrong replica"
        replayed = await a.replay_dead_letter(entry_id)
        assert replayed["status"] == DeliveryStatus.SENT.value
        assert memory(a).texts() == ["late answer"] and memory(b).texts() == []


async def test_a_command_answered_after_the_channel_left_is_handed_off_not_dead_lettered(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> None:
    async with holder_and_standby(tmp_path, redis_db, fake_llm) as (a, b, client):
        sink = memory(a).sink  # a poll's last update, taken in as the connection leaves
        await client.set(f"chatgate:lease:{LEASE}", "b", px=60_000)
        await eventually(lambda: state(a) is ChannelState.STANDBY, what="a lost the channel")
        await eventually(lambda: state(b) is ChannelState.RUNNING, what="b runs it")
        memory(a).sink = sink
        submission = await memory(a).inject("/new", message_id="m1")
        result = await asyncio.wait_for(submission.result, 30)
        assert result.delivery == DeliveryStatus.HANDED_OFF.value
        assert await a.rt.dead_letters.count() == 0, "dead-lettered instead of handed off"
        await memory(b).wait_sent(1, timeout=30)
        assert len(memory(b).texts()) == 1 and memory(a).texts() == []


async def test_a_reply_sent_as_the_state_failed_is_recorded_by_its_sender_not_handed_off(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> None:
    """a sends the answer and loses Redis before its DONE mark; the channel moves to b meanwhile.
    Back on Redis, a resumes the entry: it records the send it made, it does not hand the
    answer to b to be sent a second time. (A longer lease: a busy machine must not move it
    before a sends.)"""
    fake_llm.script("the one answer")
    client = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with TcpProxy(6379) as proxy:
            a_url = proxy.url(int(redis_db.rsplit("/", 1)[1]))
            async with (
                replica(tmp_path / "a", a_url, "a", fake_llm, ttl_s=2.0) as a,
                replica(tmp_path / "b", redis_db, "b", fake_llm, ttl_s=2.0) as b,
            ):
                await eventually(lambda: state(b) is ChannelState.STANDBY, what="b in standby")
                memory(a).after_send = proxy.go_down  # the DONE mark cannot be written
                submission = await memory(a).inject("hello", message_id="m1")
                with pytest.raises(StateUnavailable):
                    await asyncio.wait_for(submission.result, 30)
                memory(a).after_send = None
                await eventually(lambda: state(b) is ChannelState.RUNNING, what="b runs it")
                await eventually(lambda: state(a) is not ChannelState.RUNNING, what="a lost it")
                proxy.down = False  # a reaches Redis again and resumes m1

                async def done() -> bool:
                    entry = await b.rt.journal.get(submission.key)
                    return entry is not None and entry.state is JournalState.DONE

                await eventually(done, 30, "m1 done")
                assert memory(a).texts() == ["the one answer"]
                assert memory(b).texts() == [], "the answer a had sent was sent again by b"
    finally:
        await client.aclose()
