"""A replica that loses an exclusive channel while a turn runs hands the answer to the replica
now holding it: sent once, there, and not dead-lettered. A dead letter for such a channel is
replayed by its holder; a standby replica says so instead of using the entry up."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.channels.base import ChannelState
from chatgate.channels.types import Target
from chatgate.policies.reasons import DeliveryStatus, SendErrorKind
from tests.fakes.clock import eventually
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import memory
from tests.redis.test_channel_leases import LEASE, replica, state

pytestmark = pytest.mark.redis


async def test_an_answer_for_a_channel_lost_mid_turn_is_sent_by_its_new_holder(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> None:
    fake_llm.fail_next(Fault.hang())  # the turn runs until released
    client = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with (
            replica(tmp_path / "a", redis_db, "a", fake_llm) as a,
            replica(tmp_path / "b", redis_db, "b", fake_llm) as b,
        ):
            await eventually(lambda: state(b) is ChannelState.STANDBY, what="b in standby")
            submission = await memory(a).inject("hello", message_id="m1")
            await fake_llm.wait_for_requests(1, timeout=30)
            # a stalls past its lease (as on a busy loop) and b takes the connection over
            await client.set(f"chatgate:lease:{LEASE}", "b", px=60_000)
            await eventually(lambda: state(a) is ChannelState.STANDBY, what="a lost the channel")
            await eventually(lambda: state(b) is ChannelState.RUNNING, what="b runs it")
            fake_llm.release()  # the turn on a produces its answer now
            result = await submission.result
            assert result.delivery == DeliveryStatus.HANDED_OFF.value
            await memory(b).wait_sent(1, timeout=30)
            assert len(memory(b).texts()) == 1 and memory(a).texts() == []
            assert await a.rt.dead_letters.count() == 0
            assert len(fake_llm.requests) == 1, "the answer was produced again"
            entry = await b.rt.journal.get(result.key)
            assert entry is not None and entry.delivery == DeliveryStatus.SENT.value
    finally:
        await client.aclose()


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
