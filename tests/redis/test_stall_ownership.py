"""Who may answer after a stall: the journal's owner. A stalled replica's answer to an entry
adopted meanwhile is kept for the adopter (which sends it); its other outcome writes are refused."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from chatgate.model.messages import InboundMessage
from chatgate.state.records import JournalMark, JournalState
from chatgate.state.redis.client import Keys
from chatgate.state.redis.journal import RedisJournal

pytestmark = pytest.mark.redis
KEYS = Keys("st:")
NOW = 1_800_000_000.0
DAY = 86_400.0
REPLY = {"outcome": "text", "message": {"blocks": [{"text": "done"}]}}


def message(message_id: str) -> InboundMessage:
    return InboundMessage("tg", "telegram", "c1", "direct", "u1", message_id, "hi")


async def test_a_stalled_replica_cannot_write_the_outcome_of_an_adopted_entry(
    client: Redis,
) -> None:
    a, b = RedisJournal(client, KEYS, "a"), RedisJournal(client, KEYS, "b")
    await client.set(KEYS("replica", "b"), "{}", px=60_000)
    await a.record(message("m1"), NOW, DAY)
    await a.record(message("m2"), NOW, DAY)
    assert await a.owns("tg:m1")  # unconfirmed liveness: asked in Redis
    # a stalls past its heartbeat TTL (its liveness key expired); b adopts both
    assert sorted(e.key for e in await b.orphaned(["tg"])) == ["tg:m1", "tg:m2"]
    assert not await a.owns("tg:m1") and await b.owns("tg:m1")
    # a's answer to a pending entry is kept for b, which sends it (no second model call)
    await a.settle("tg:m1", JournalMark(JournalState.ANSWERED, NOW, session="s1", reply=REPLY))
    await a.finish("tg:m2", NOW, stage="turn", reason="text", delivery="sent", delivery_ids=[])
    first, second = await b.get("tg:m1"), await b.get("tg:m2")
    assert first is not None and first.state is JournalState.ANSWERED and first.reply == REPLY
    assert second is not None and second.state is JournalState.PENDING  # a's DONE: refused
    other = {"outcome": "text", "message": {"blocks": [{"text": "again"}]}}
    await a.settle(
        "tg:m1", JournalMark(JournalState.ANSWERED, NOW, session="s1", reply=other)
    )  # refused
    first = await b.get("tg:m1")
    assert first is not None and first.reply == REPLY
    await b.finish("tg:m1", NOW, stage="turn", reason="text", delivery="sent", delivery_ids=[])
    await b.finish("tg:m2", NOW, stage="turn", reason="text", delivery="sent", delivery_ids=[])
    second = await b.get("tg:m2")
    assert second is not None and second.state is JournalState.DONE
    assert await client.zrange(KEYS("journal", "open"), 0, -1) == []


async def test_intake_settles_are_not_guarded(client: Redis) -> None:
    """Drops and notices before a turn are written by whoever holds the message."""
    a = RedisJournal(client, KEYS, "a")
    await a.record(message("m1"), NOW, DAY)
    await a.settle(
        "tg:m1", JournalMark(JournalState.DROPPED, NOW, stage="admission", reason="blocked")
    )
    entry = await a.get("tg:m1")
    assert entry is not None and entry.state is JournalState.DROPPED


async def test_an_adopted_answer_its_stalled_sender_sent_is_not_sent_again(
    client: Redis,
) -> None:
    """a froze mid-send (past its send mark); b adopted the entry. b waits (up to the grace)
    for a to record the send and then sends nothing; an answer a never recorded is sent by b
    once the grace ran out, and a's late record is refused."""
    a = RedisJournal(client, KEYS, "a")
    b = RedisJournal(client, KEYS, "b", send_grace_s=30)
    b_short = RedisJournal(client, KEYS, "b", send_grace_s=0.3)
    await client.set(KEYS("replica", "b"), "{}", px=60_000)
    for m in ("m1", "m2"):
        await a.record(message(m), NOW, DAY)
        await a.settle(
            f"tg:{m}", JournalMark(JournalState.ANSWERED, NOW, session="s1", reply=REPLY)
        )
        assert await a.claim_send(f"tg:{m}")  # a's send is under way, then a freezes
    assert sorted(e.key for e in await b.orphaned(["tg"])) == ["tg:m1", "tg:m2"]
    waiting = asyncio.ensure_future(b.claim_send("tg:m1"))
    await asyncio.sleep(0.3)
    assert not waiting.done()  # a may still record its send
    await a.finish("tg:m1", NOW, stage="turn", reason="text", delivery="sent", delivery_ids=["1"])
    assert await asyncio.wait_for(waiting, 10) is False  # a sent it: b does not
    first = await b.get("tg:m1")
    assert first is not None and first.state is JournalState.DONE and first.delivery_ids == ["1"]
    assert await asyncio.wait_for(b_short.claim_send("tg:m2"), 10)  # a never recorded it
    await a.finish("tg:m2", NOW, stage="turn", reason="text", delivery="sent", delivery_ids=[])
    second = await b.get("tg:m2")
    assert second is not None and second.state is JournalState.ANSWERED  # a's late write refused
    assert not await a.claim_send("tg:m2")
