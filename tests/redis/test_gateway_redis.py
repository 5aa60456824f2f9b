"""Real in-process gateways on Redis: shared sessions across replicas, fail-closed turn lock."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.clock import SystemClock
from chatgate.model.errors import StateUnavailable
from chatgate.model.text_ids import TextId
from chatgate.state import admin
from chatgate.state.factory import build_state
from chatgate.state.records import JournalState
from chatgate.texts.voice import Voice
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import load, memory, running, write_config
from tests.redis.conftest import redis_url

pytestmark = pytest.mark.redis


def config(directory: Path, fake: FakeLLM, gateway: str) -> Path:
    return write_config(
        directory,
        f"""{gateway}
  rate_limits: {{per_sender: null, per_chat: null}}
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: sk-test
    timeout_s: 5
channels:
  memory: {{dm_policy: open}}
""",
    )


def on_redis(url: str, replica: str) -> str:
    return (
        f"  store: {{backend: redis, url: '{url}', key_prefix: 'cg:'}}\n"
        f"  turn_lock: {{backend: redis}}\n"
        f"  redis: {{replica_id: {replica}}}\n"
    )


async def test_unreachable_redis_lock_fails_closed_and_keeps_the_message_for_later(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    gateway = "  turn_lock: {backend: redis}\n  redis: {url: 'redis://127.0.0.1:1/0'}\n"
    async with running(config(tmp_path, fake_llm, gateway)) as gw:
        chat = memory(gw)
        submission = await chat.inject("hello")
        with pytest.raises(StateUnavailable):  # the caller is told to retry; the journal keeps it
            await submission.result
        entry = await gw.rt.journal.get(submission.key)
    assert entry is not None and entry.state is JournalState.PENDING
    assert chat.texts() == [Voice().text(TextId.STATE_AWAY)]
    assert fake_llm.requests == [], "a turn ran without the cluster-wide lock"


async def test_two_replicas_share_one_transcript_and_the_offline_cli_sees_it(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    fake_llm.default_reply = lambda r: f"re: {r.last_user_text}"
    one = config(tmp_path / "a", fake_llm, on_redis(redis_db, "a"))
    two = config(tmp_path / "b", fake_llm, on_redis(redis_db, "b"))
    async with running(one) as gw_a, running(two) as gw_b:
        await (await memory(gw_a).inject("first", message_id="m1")).result
        await (await memory(gw_b).inject("second", message_id="m2")).result
        await (await memory(gw_a).inject("third", message_id="m3")).result  # a's copy is stale
        dup = await memory(gw_b).inject("first", message_id="m1")  # same message, other replica
        assert dup.duplicate
    # 2 per earlier turn + the new one: each replica saw the other's turns
    assert [len(r.messages) for r in fake_llm.requests] == [1, 3, 5]
    loaded = load(one)
    state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
    await state.open()
    try:
        sessions = (await admin.sessions_list(state))["sessions"]
        assert len(sessions) == 1 and sessions[0]["message_count"] == 6
        shown = await admin.session_show(state, sessions[0]["key"])
        assert [m["content"] for m in shown["messages"]][-2:] == ["third", "re: third"]
    finally:
        await state.close()
    client = Redis.from_url(redis_db, decode_responses=True)
    assert await client.keys("cg:lock:*") == []  # every lease released
    await client.aclose()


async def test_one_session_fed_through_two_replicas_never_runs_two_turns_at_once(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A burst spread over two replicas: each turn waits only for earlier messages that are
    being answered, never for one queued behind a turn that waits for it (a lock TTL each)."""
    fake_llm.latency_s = 0.05
    fake_llm.default_reply = lambda r: f"re: {r.last_user_text}"
    fake_llm.group_of = lambda r: "the one session"
    one = config(tmp_path / "a", fake_llm, on_redis(redis_db, "a"))
    two = config(tmp_path / "b", fake_llm, on_redis(redis_db, "b"))
    async with running(one) as gw_a, running(two) as gw_b:
        subs = await asyncio.gather(
            *(
                memory(gw).inject(f"{name} {i}", message_id=f"{name}{i}")
                for i in range(5)
                for name, gw in (("a", gw_a), ("b", gw_b))
            )
        )
        results = await asyncio.gather(*(s.result for s in subs))
    assert all(r.delivery == "sent" for r in results)
    assert fake_llm.max_in_flight_by["the one session"] == 1, "two turns of one session at once"
    # every turn saw every earlier one, whichever replica ran it: 1, 3, 5, ... messages
    assert sorted(len(r.messages) for r in fake_llm.requests) == [1 + 2 * i for i in range(10)]
    gave_up = [r for r in caplog.records if "no longer waits" in r.getMessage()]
    assert not gave_up, "a turn waited a whole lock TTL for an earlier message of its session"


async def test_a_duplicate_on_another_replica_gets_the_answer_once_the_first_one_finishes(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """A retried delivery that lands on another replica while the first still runs used to wait
    on a result nobody would ever set, on that replica, for every later retry too."""
    fake_llm.fail_next(Fault.hang())  # the first replica's turn runs until released
    one = config(tmp_path / "a", fake_llm, on_redis(redis_db, "a"))
    two = config(tmp_path / "b", fake_llm, on_redis(redis_db, "b"))
    async with running(one) as gw_a, running(two) as gw_b:
        first = await memory(gw_a).inject("hello", message_id="m1")
        await fake_llm.wait_for_requests(1, timeout=30)
        dup = await memory(gw_b).inject("hello", message_id="m1")
        assert dup.duplicate and not dup.result.done()
        fake_llm.release()
        answered = await first.result
        relayed = await asyncio.wait_for(dup.result, 30)
        assert (relayed.reply, relayed.session) == (answered.reply, answered.session)
        again = await memory(gw_b).inject("hello", message_id="m1")  # a later retry, same replica
        assert (await asyncio.wait_for(again.result, 30)).reply == answered.reply
    assert len(fake_llm.requests) == 1
    assert memory(gw_b).texts() == []


async def test_a_stalled_replicas_message_adopted_meanwhile_is_not_run_twice(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """A replica whose liveness key lapsed (a long stall, not death) loses its open messages to
    another; the adopter's turn waits on the session lock and must not run them again: the
    stalled replica's answer is kept in the journal and sent by the adopter, which owns it."""
    fake_llm.fail_next(Fault.hang())
    slow_beats = "  redis: {replica_id: %s, lease_ttl_s: 120}\n"
    one = config(tmp_path / "a", fake_llm, on_redis(redis_db, "a").replace(
        "  redis: {replica_id: a}\n", slow_beats % "a"))  # fmt: skip
    two = config(tmp_path / "b", fake_llm, on_redis(redis_db, "b").replace(
        "  redis: {replica_id: b}\n", slow_beats % "b"))  # fmt: skip
    client = Redis.from_url(redis_db, decode_responses=True)
    async with running(one) as gw_a, running(two) as gw_b:
        first = await memory(gw_a).inject("hello", message_id="m1")
        await fake_llm.wait_for_requests(1, timeout=30)
        await client.delete("cg:replica:a")  # as if a had stalled past its liveness TTL
        assert await gw_b.pipeline.adopt() == 1
        fake_llm.release()
        answered = await first.result
        await gw_b.pipeline.drain(30)  # b's turn for the adopted message has run its course
    await client.aclose()
    assert len(fake_llm.requests) == 1, "the adopted message was run again"
    assert memory(gw_a).texts() == [] and len(memory(gw_b).texts()) == 1  # sent once, by b
    assert answered.delivery == "handed_off"


async def test_a_stopped_gateway_leaves_no_redis_connection_open(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """Stores, heartbeats and the turn lock each have a client; stop closes every one."""
    admin_client = Redis.from_url(redis_url(0), decode_responses=True)
    db = f"db={redis_db.rsplit('/', 1)[1]}"

    async def connections_on_test_db() -> int:
        listing = await admin_client.execute_command("CLIENT", "LIST")
        lines = listing if isinstance(listing, list) else str(listing).splitlines()
        return sum(1 for line in lines if db in str(line).split())

    before = await connections_on_test_db()  # the test db's own claim
    async with running(config(tmp_path, fake_llm, on_redis(redis_db, "a"))) as gw:
        await (await memory(gw).inject("hello")).result
        assert await connections_on_test_db() > before
    assert await connections_on_test_db() == before
    await admin_client.aclose()
