"""The web chat's Redis store: one install key for every replica, and an outbox whose writes
(new messages, edits in place, pruning) every replica sees and is told about."""

from __future__ import annotations

from redis.asyncio import Redis

from chatgate.channels.webchat.outbox import Entry
from chatgate.channels.webchat.store_redis import RedisOutbox, RedisWebChat
from chatgate.state.redis.client import Keys
from tests.support.waiting import eventually


async def test_two_replicas_share_the_key_and_see_each_others_writes(redis_db: str) -> None:
    one = Redis.from_url(redis_db, decode_responses=True)
    two = Redis.from_url(redis_db, decode_responses=True)
    seen: list[Entry] = []
    typing: list[tuple[str, float]] = []
    a, b = RedisWebChat(one, Keys("wc:")), RedisWebChat(two, Keys("wc:"))
    assert await a.install_key() == await b.install_key()
    assert len(await a.install_key()) == 32
    writer = a.outbox("chat", keep=10, max_age_s=3600, publish=lambda e: None,
                      typing=lambda s, t: None, resync=lambda: None)  # fmt: skip
    reader = b.outbox("chat", keep=10, max_age_s=3600, publish=seen.append,
                      typing=lambda s, t: typing.append((s, t)), resync=lambda: None)  # fmt: skip
    await writer.open(0.0)
    await reader.open(0.0)
    try:
        first = await writer.put("s1", "user", {"text": "hi"}, 1.0, message_id="u-1")
        draft = await writer.put("s1", "assistant", {"blocks": ["…"]}, 2.0)
        final = await writer.put("s1", "assistant", {"blocks": ["done"]}, 3.0, message_id=draft.id)
        await writer.typing("s1", 5.0)
        assert (first.seq, draft.seq, final.seq) == (1, 2, 3)
        assert final.id == draft.id == "m2" and final.pos == draft.pos == 2  # edited in place
        await eventually(lambda: len(seen) == 3 and bool(typing))
        assert [e.seq for e in seen] == [1, 2, 3] and seen[-1].body == {"blocks": ["done"]}
        assert typing == [("s1", 5.0)]
        replay = await reader.since("s1", 0)
        assert [(e.id, e.seq, e.role) for e in replay] == [
            ("u-1", 1, "user"),
            ("m2", 3, "assistant"),
        ]
        assert [e.id for e in await reader.since("s1", 1)] == ["m2"]
        assert await reader.since("other", 0) == []
    finally:
        await writer.close()
        await reader.close()
        await one.aclose()
        await two.aclose()


async def test_old_rows_are_pruned_and_keys_expire(redis_db: str) -> None:
    client = Redis.from_url(redis_db, decode_responses=True)
    outbox = RedisOutbox(client, Keys("wc:"), "chat", keep=10, max_age_s=60,
                         publish=lambda e: None, typing=lambda s, t: None, resync=lambda: None)  # fmt: skip
    try:
        for i in range(31):
            await outbox.put("s1", "user", {"text": str(i)}, float(i))
        kept = await outbox.since("s1", 0)
        assert 10 <= len(kept) <= 30 and kept[-1].body == {"text": "30"}
        assert [e.seq for e in kept] == list(range(32 - len(kept), 32))
        ttl = await client.pttl("wc:webchat:chat:messages:s1")
        assert 0 < ttl <= 60_000
    finally:
        await client.aclose()
