"""The Redis stores, two instances standing for two replicas on one database."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from chatgate.model.chat import ChatMessage
from chatgate.model.messages import InboundMessage, Target
from chatgate.model.reasons import SendErrorKind
from chatgate.policies.pairing import ApprovalOutcome, IssueOutcome
from chatgate.state.records import JournalMark, JournalState
from chatgate.state.redis.callbacks import RedisCallbacks
from chatgate.state.redis.client import Keys
from chatgate.state.redis.dead_letters import RedisDeadLetters, RedisDeadTargets
from chatgate.state.redis.facts import RedisFacts
from chatgate.state.redis.journal import RedisJournal
from chatgate.state.redis.pairing import RedisPairing
from chatgate.state.redis.sessions import RedisSessionStore

pytestmark = pytest.mark.redis
KEYS = Keys("cg:")
NOW = 1_800_000_000.0
DAY = 86_400.0


def message(message_id: str, sender: str = "u1") -> InboundMessage:
    return InboundMessage("tg", "telegram", "c1", "direct", sender, message_id, "hi")


async def test_dead_letters_and_dead_targets_are_shared(client: Redis) -> None:
    a, b = RedisDeadLetters(client, KEYS), RedisDeadLetters(client, KEYS)
    target = Target("tg", "c1")
    first = await a.add(target, {"blocks": [{"text": "x"}]}, SendErrorKind.TRANSIENT, "e", 5, NOW)
    second = await b.add(target, {"blocks": []}, "forbidden", "e", 1, NOW, session="s")
    assert (await a.count(), [d.id for d in await b.list()]) == (2, [first, second])
    peeked = await a.get(first)
    assert peeked is not None and peeked.target == target and await b.count() == 2  # left in place
    taken = await b.take(first)
    assert (
        taken is not None and taken.target == target and taken.message["blocks"][0]["text"] == "x"
    )
    assert await a.take(first) is None  # handed out once
    assert await a.get(first) is None
    assert await a.drop(second) and not await b.drop(second)
    assert await b.count() == 0
    dead_a, dead_b = RedisDeadTargets(client, KEYS), RedisDeadTargets(client, KEYS)
    await dead_a.mark(target, SendErrorKind.FORBIDDEN, "blocked", NOW)
    assert await dead_b.kind(target) == "forbidden"
    assert await dead_b.all() == {"tg:c1": "forbidden"}
    assert await dead_b.revive("tg:c1") and not await dead_a.revive("tg:c1")
    assert await dead_a.kind(target) is None


async def test_pairing_approved_on_one_replica_is_known_to_the_other(client: Redis) -> None:
    a, b = RedisPairing(client, KEYS), RedisPairing(client, KEYS)
    issued = await a.request("tg", "u1", "Ada", "c1", NOW)
    assert issued.outcome is IssueOutcome.ISSUED and issued.code
    again = await b.request("tg", "u1", "Ada", "c1", NOW + 1)
    assert again.outcome is not IssueOutcome.ISSUED  # the other replica sees the pending code
    assert [p.code for p in await b.pending(NOW + 2)] == [issued.code]
    assert (await b.approve("tg", "NOPE1234", NOW + 3)).outcome is not ApprovalOutcome.APPROVED
    decision = await b.approve("tg", issued.code, NOW + 4)
    assert decision.outcome is ApprovalOutcome.APPROVED and decision.sender_id == "u1"
    assert await a.is_approved("tg", "u1")
    assert [x.sender_name for x in await a.approved("tg")] == ["Ada"]
    assert await a.pending(NOW + 5) == []
    taken = await asyncio.gather(a.take_unnotified(), b.take_unnotified())
    assert sorted(len(t) for t in taken) == [0, 1]  # announced by exactly one replica
    assert await b.revoke("tg", "u1") and not await a.is_approved("tg", "u1")


async def test_dedupe_is_cluster_wide(client: Redis) -> None:
    a, b = RedisJournal(client, KEYS, "a"), RedisJournal(client, KEYS, "b")
    results = await asyncio.gather(*(j.record(message("m1"), NOW, DAY) for j in (a, b, a, b)))
    assert sorted(new for new, _ in results) == [False, False, False, True]
    await a.settle("tg:m1", JournalMark(JournalState.DROPPED, NOW, stage="policy", reason="r"))
    new, existing = await b.record(message("m1"), NOW + 10, DAY)
    assert not new and existing is not None and existing.state is JournalState.DROPPED
    assert (await b.record(message("m1"), NOW + 2 * DAY, DAY))[0]  # outside the window: new


async def test_a_dead_replicas_open_messages_are_claimed_by_exactly_one_other(
    client: Redis,
) -> None:
    a, b, c = (RedisJournal(client, KEYS, name) for name in "abc")
    for name in "abc":
        await client.set(KEYS("replica", name), "{}", px=60_000)
    await a.record(message("m1"), NOW, DAY)
    await a.record(message("m2"), NOW, DAY)
    await a.record(message("m3"), NOW, DAY)
    reply = {"outcome": "text", "message": {"blocks": [{"text": "done"}]}}
    await a.settle("tg:m2", JournalMark(JournalState.ANSWERED, NOW, session="s1", reply=reply))
    await a.finish("tg:m3", NOW, stage="turn", reason="text", delivery="sent", delivery_ids=[])
    assert await b.unfinished() == []  # a is alive: its messages are its own
    assert await a.orphaned(["tg"]) == []  # nor are a live replica's own messages orphans
    await client.delete(KEYS("replica", "a"))  # a died (its liveness key expired)
    assert await b.orphaned(["discord"]) == []  # b cannot answer on tg: it claims nothing
    claims = await asyncio.gather(b.orphaned(["tg"]), c.orphaned(["tg", "web"]))
    claimed = sorted(e.key for got in claims for e in got)
    assert claimed == ["tg:m1", "tg:m2"]  # each once; the DONE one is not re-run
    assert [len(got) for got in claims] in ([2, 0], [0, 2])
    answered = next(e for got in claims for e in got if e.key == "tg:m2")
    assert answered.state is JournalState.ANSWERED and answered.reply == reply  # re-send it
    found = await c.find("tg", message_id="m2")
    assert [e.key for e in found] == ["tg:m2"]
    assert [e.key for e in await c.find("tg", sender_id="u1")] == ["tg:m3", "tg:m2", "tg:m1"]


async def test_button_payloads_resolve_on_another_replica(client: Redis) -> None:
    a, b = RedisCallbacks(client, KEYS), RedisCallbacks(client, KEYS)
    ref = a.put("x" * 200)
    await a.flush()
    assert await b.resolve(f"ref:{ref}") == "x" * 200
    assert await b.resolve("ref:unknown") is None


async def test_transcript_meta_round_trips_through_redis(client: Redis) -> None:
    store = RedisSessionStore(client, KEYS)
    meta = {"tools": [{"name": "search.web", "ok": True}]}
    await store.append(
        "s",
        0,
        [ChatMessage("user", "q", "Ann", "k1"), ChatMessage("assistant", "a", None, "k1", meta)],
        NOW,
    )
    loaded = await store.load("s", 10)
    assert [(m.role, m.meta) for m in loaded.messages] == [("user", None), ("assistant", meta)]


async def test_channel_facts_are_shared_and_expire(client: Redis) -> None:
    a, b = RedisFacts(client, KEYS), RedisFacts(client, KEYS)
    await a.put("wa", "window:1", {"at": NOW}, NOW, 60.0)
    await a.put("wa", "receipt:w1", {"status": "read"}, NOW, 7 * DAY)
    assert await b.get_many("wa", ["window:1", "receipt:w1", "nope"], NOW) == {
        "window:1": {"at": NOW},
        "receipt:w1": {"status": "read"},
    }
    assert await b.get_many("other", ["window:1"], NOW) == {}
    # expiry is Redis' own TTL (there is no clock to inject into it)
    assert 0 < await client.pttl("cg:fact:wa:window:1") <= 60_000
    assert 6 * DAY * 1000 < await client.pttl("cg:fact:wa:receipt:w1") <= 7 * DAY * 1000
