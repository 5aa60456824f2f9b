"""Redis restarts without its data while two real `chatgate run` replicas hold turns at the model
and DMs queued behind them: each replica re-journals what it holds (one log line with the count),
and every DM it held is answered, once; so are turns that all find their entry gone at once (one
in-process replica)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.gateway.app import Gateway
from chatgate.gateway.turn.job import Job
from chatgate.model.messages import InboundMessage, default_target
from chatgate.model.outbound import OutboundMessage, message_to_dict
from chatgate.model.reasons import DeliveryStatus
from chatgate.policies.channel_states import ChannelState
from chatgate.state.records import JournalMark, JournalState
from chatgate.state.redis.client import Keys
from chatgate.state.redis.journal import RedisJournal
from chatgate.state.redis.leases import FENCE_KEY
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.tcp_proxy import TcpProxy
from tests.fakes.telegram import FakeTelegram
from tests.harness import memory, running
from tests.redis.conftest import PrivateRedis
from tests.redis.replicas_support import (
    PREFIX,
    echo_replies,
    owner,
    sent_texts,
    start_telegram_replicas,
    stop_all,
    warnings,
)
from tests.redis.test_channel_leases import LEASE, state
from tests.redis.test_gateway_redis import config, on_redis
from tests.redis.test_handoff import a_turn_at_the_model
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 3.0
USERS, PER_USER = 4, 3
NOW = 1_800_000_000.0
RESTORED = "the store lost its data; re-journaled the messages this replica holds"


def wipe(redis: PrivateRedis) -> None:
    """Restart Redis without its data (no append-only file left)."""
    redis.kill()
    for leftover in redis.directory.rglob("*.aof*"):
        if leftover.is_file():
            leftover.unlink()
    redis.start()


def restored_counts(text: str) -> list[int]:
    return [
        json.loads(line)["count"]
        for line in text.splitlines()
        if line.startswith("{") and RESTORED in line
    ]


async def test_a_wiped_redis_loses_nothing_a_replica_held(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    held = fake_llm.held = asyncio.Event()  # each user's turn at the model, the others queued
    echo_replies(fake_llm)
    client = Redis.from_url(private_redis.url, decode_responses=True)
    urls = dict.fromkeys(("r1", "r2"), private_redis.url)
    daemons = await start_telegram_replicas(
        tmp_path, fake_tg, fake_llm, urls, lease_ttl_s=LEASE_TTL_S, lock_ttl_s=6.0
    )
    expected = {f"re: u{u} m{i}" for u in range(1, USERS + 1) for i in range(PER_USER)}
    try:
        await eventually(lambda: owner(client), 30, "a telegram owner")
        for i in range(PER_USER):
            for user in range(1, USERS + 1):
                fake_tg.dm(user, f"u{user} m{i}")
        await fake_llm.wait_for_requests(USERS, timeout=90)  # every user's first turn runs
        assert await client.zcard(PREFIX + "journal:open") == USERS * PER_USER
        wipe(private_redis)

        def restored() -> bool:
            counts = [n for d in daemons.values() for n in restored_counts(d.logs())]
            return sum(counts) >= USERS * PER_USER

        await eventually(restored, 60, "the replicas re-journaled every DM they hold")
        held.set()  # the turns answer only now: none finished before its replica saw the wipe

        async def answered() -> bool:
            return expected <= set(sent_texts(fake_tg))

        await eventually(answered, 60, f"all {len(expected)} answers after the wipe")
        log = warnings(daemons)
        assert set(sent_texts(fake_tg)) == expected, log
        assert max(sent_texts(fake_tg).values()) == 1, f"repeated\n{log}"
        counts = [n for d in daemons.values() for n in restored_counts(d.logs())]
        assert sum(counts) >= USERS * PER_USER, f"{counts}\n{log}"  # every held DM, once
        assert len(counts) <= len(daemons), f"one line per replica: {counts}"
    finally:
        await stop_all(daemons, kill=True)
        await client.aclose()


async def test_turns_finishing_together_after_a_wipe_all_send_their_answers(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """The first turn to find its entry gone re-journals everything the replica holds; the
    turns that asked meanwhile, while it did, are among what it restored and send too."""
    sessions = 6
    fake_llm.fail_next(Fault.hang(), times=sessions)
    clock = ManualClock()  # no adoption poll or probe: the turns find the wipe themselves
    admin = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with running(config(tmp_path, fake_llm, on_redis(redis_db, "a")), clock=clock) as gw:
            chat = memory(gw)
            submissions = [
                await chat.inject(f"hi {n}", chat_id=f"c{n}", sender_id=f"u{n}")
                for n in range(sessions)
            ]
            await fake_llm.wait_for_requests(sessions, timeout=30)
            await admin.flushdb()  # Redis restarted without its data
            fake_llm.release()  # every turn answers at once
            results = [await asyncio.wait_for(s.result, 30) for s in submissions]
            assert [r.delivery for r in results] == [DeliveryStatus.SENT.value] * sessions
            assert sorted(s.target.chat_id for s in chat.sent) == [f"c{n}" for n in range(sessions)]
    finally:
        await admin.aclose()


async def test_an_answer_handed_off_and_not_yet_claimed_survives_a_wipe(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a hands its answer off while no replica here serves the channel (another holds it);
    Redis loses its data before anyone claims it. a still knows the answer: it journals it
    again, handed off, and the replica serving the channel next sends it, once."""
    async with a_turn_at_the_model(tmp_path, redis_db, fake_llm) as (a, b, submission, client):
        await client.set(f"chatgate:lease:{LEASE}", "elsewhere", px=60_000)
        await eventually(lambda: state(a) is ChannelState.STANDBY, what="a lost the channel")
        fake_llm.release()
        result = await asyncio.wait_for(submission.result, 30)
        assert result.delivery == DeliveryStatus.HANDED_OFF.value
        await client.flushdb()  # Redis restarted without its data: the hand-off is gone
        await eventually(lambda: len(memory(a).sent) + len(memory(b).sent) >= 1, 30, "sent")
        entry = await a.rt.journal.get(result.key)
        assert entry is not None and entry.state is JournalState.DONE
        assert len(memory(a).sent) + len(memory(b).sent) == 1
        assert len(fake_llm.requests) == 1, "the answer was produced again"


async def dead_replicas_answer(admin: Redis) -> InboundMessage:
    """An answer a replica that died stored for session s1, whose turn lock a live replica
    holds: the adopter waits for that lock to send it."""
    dead = RedisJournal(admin, Keys("cg:"), "gone")
    msg = InboundMessage("memory", "memory", "c1", "direct", "u1", "m1", "hi")
    msg = replace(msg, reply_target=default_target(msg))
    stored = {"message": message_to_dict(OutboundMessage.from_text("the stored answer"))}
    await dead.record(msg, NOW, 60)
    await dead.settle(msg.key, JournalMark(JournalState.ANSWERED, NOW, session="s1", reply=stored))
    await admin.set("cg:replica:busy", "1", ex=60)
    await admin.set("cg:lock:s1", "busy/turn", ex=60)
    return msg


async def test_a_stored_answer_taken_up_and_not_yet_sent_survives_a_wipe(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a adopts the answer a dead replica stored, and waits for its session's turn lock to send
    it; Redis loses its data meanwhile. a journals that answer again and sends it."""
    admin = Redis.from_url(redis_db, decode_responses=True)
    try:
        msg = await dead_replicas_answer(admin)
        async with running(config(tmp_path, fake_llm, on_redis(redis_db, "a"))) as gw:

            async def adopted() -> bool:
                return await admin.hget(f"cg:journal:e:{msg.key}", "owner") == "a"

            await eventually(adopted, 30, "a adopted the answer")
            await admin.flushdb()  # Redis restarted without its data (and the lock with it)
            await memory(gw).wait_sent(1, timeout=30)
            assert memory(gw).texts() == ["the stored answer"]
    finally:
        await admin.aclose()


async def test_a_stored_answer_whose_send_failed_on_the_state_survives_a_wipe(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a adopts a dead replica's stored answer; Redis goes away before a sends it, and comes
    back without its data. a still holds that answer: it journals it again and sends it."""
    admin = Redis.from_url(redis_db, decode_responses=True)
    clock = ManualClock()  # the adoption poll and the state probe run when the test says
    try:
        msg = await dead_replicas_answer(admin)
        async with TcpProxy(6379) as proxy:
            url = proxy.url(int(redis_db.rsplit("/", 1)[1]))
            async with running(config(tmp_path, fake_llm, on_redis(url, "a")), clock=clock) as gw:

                async def adopted() -> bool:
                    clock.advance(5.0)
                    return await admin.hget(f"cg:journal:e:{msg.key}", "owner") == "a"

                await eventually(adopted, 30, "a adopted the answer")
                proxy.go_down()  # the send fails on the state (its turn lock cannot be taken)
                await eventually(lambda: gw.pipeline.guard.current() is not None, what="refused")
                await admin.flushdb()
                proxy.down = False  # back, without its data

                async def sent() -> bool:
                    clock.advance(5.0)  # the state probe, then the adoption poll
                    return bool(memory(gw).sent)

                await eventually(sent, 30, "the stored answer sent")
                assert memory(gw).texts() == ["the stored answer"]
    finally:
        await admin.aclose()


async def test_a_message_taken_up_whose_intake_failed_on_the_state_survives_a_wipe(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a adopts a dead replica's unanswered message; the state fails while that message is in
    the intake stages, and Redis comes back without its data before the next probe. a still
    holds the message: it journals it again and answers it."""
    admin = Redis.from_url(redis_db, decode_responses=True)
    clock = ManualClock()  # the adoption poll and the state probe run when the test says
    try:
        dead = RedisJournal(admin, Keys("cg:"), "gone")
        msg = InboundMessage("memory", "memory", "c1", "direct", "u1", "m1", "hi")
        msg = replace(msg, reply_target=default_target(msg))
        await dead.record(msg, NOW, 60)
        async with TcpProxy(6379) as proxy:
            url = proxy.url(int(redis_db.rsplit("/", 1)[1]))
            async with running(config(tmp_path, fake_llm, on_redis(url, "a")), clock=clock) as gw:
                # the claim's read of the entry passes; what the intake asks next fails
                fault = proxy.fail_after("HGETALL", contains=msg.key.encode(), action="close")
                fault.count = 3

                def refused() -> bool:
                    clock.advance(5.0)
                    return gw.pipeline.guard.current() is not None

                await eventually(refused, 30, "the intake failed on the state")
                assert await admin.hget(f"cg:journal:e:{msg.key}", "owner") == "a"
                await admin.flushdb()  # Redis restarted without its data
                proxy.fault = None

                async def sent() -> bool:
                    clock.advance(5.0)  # the state probe, then the adoption poll
                    return bool(memory(gw).sent)

                await eventually(sent, 30, "the message answered")
                assert len(fake_llm.requests) == 1
    finally:
        await admin.aclose()


async def test_held_work_that_is_also_a_kept_hand_off_is_kept_not_handed_off_after_a_wipe(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """A message a's turn runs is also among the hand-offs a keeps (handed off and taken back
    here, not yet forgotten). Redis loses its data: a journals it again as its own work, not
    handed off (the turn running here answers it, once)."""
    fake_llm.fail_next(Fault.hang())
    clock = ManualClock()  # no adoption poll or probe: the test asks for the check
    admin = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with running(config(tmp_path, fake_llm, on_redis(redis_db, "a")), clock=clock) as gw:
            submission = await memory(gw).inject("hi")
            await fake_llm.wait_for_requests(1, timeout=30)
            held = gw.pipeline.held
            [job] = gw.pipeline.scheduler.held()
            await held.hand_off_waiting(job)  # a keeps the turn's entry as handed off too
            await eventually(lambda: job.msg.key in held._handed, 30, "the hand-off kept")
            await admin.flushdb()  # Redis restarted without its data
            assert await held.check() == 1
            assert await admin.hget(f"cg:journal:e:{job.msg.key}", "owner") == "a"
            fake_llm.release()
            result = await asyncio.wait_for(submission.result, 30)
            assert result.delivery == DeliveryStatus.SENT.value
            assert len(memory(gw).sent) == 1
    finally:
        await admin.aclose()


async def test_a_later_message_waits_for_the_turn_a_replica_held_across_a_wipe(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a's turn for m1 is at the model when Redis loses its data (its turn lock with it), and b
    serves the chat next. a takes that lock again as it re-journals m1, so m2 of the same
    session, taken in by b, waits for it: m1's answer (handed off to b) goes out first."""
    echo_replies(fake_llm)
    async with a_turn_at_the_model(tmp_path, redis_db, fake_llm) as (a, b, first, client):
        [lock] = await client.keys("chatgate:lock:*")
        await client.flushdb()  # Redis restarted without its data
        await client.set(f"chatgate:lease:{LEASE}", "b", px=60_000)  # b serves the chat next
        await eventually(lambda: state(b) is ChannelState.RUNNING, what="b runs the channel")

        async def rejournaled() -> bool:
            return bool(await client.exists(f"chatgate:journal:e:{first.key}"))

        await eventually(rejournaled, 30, "a re-journaled its turn")
        assert str(await client.get(lock)).startswith("a/"), "the turn lock not taken again"
        second = await memory(b).inject("again", message_id="m2")
        fake_llm.release()
        await asyncio.wait_for(asyncio.gather(first.result, second.result), 30)
        await eventually(lambda: len(memory(a).sent) + len(memory(b).sent) >= 2, 30, "sent")
        # m1's (the hung call's reply), then m2's, in the order sent by either replica (the
        # channel can move back to a when b's renewal is late under load)
        sent = sorted(memory(a).sent + memory(b).sent, key=lambda s: s.at)
        texts = [s.text for s in sent]
        assert len(texts) == 2 and texts[1] == "re: again", texts


async def a_turn_cut_short(gw: Gateway, proxy: TcpProxy, fake_llm: FakeLLM) -> Job:
    """A turn of "hi" at the (hung) model when Redis goes away; it ends while the state is
    away, so it fails on the state: the message is held as cut short."""
    fake_llm.fail_next(Fault.hang())
    submission = await memory(gw).inject("hi")
    await fake_llm.wait_for_requests(1, timeout=30)
    [job] = gw.pipeline.scheduler.held()
    proxy.go_down()
    fake_llm.release()
    await eventually(lambda: submission.result.done(), 30, "the turn failed")
    return job


async def test_a_turn_cut_short_by_the_state_keeps_its_session_locked_across_a_wipe(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a's turn fails on the state (Redis away as it ends); Redis comes back without its data.
    a journals the message again and locks its session for it (the lock its resumed turn takes
    over), so a later message of that session on another replica waits for it."""
    clock = ManualClock()  # no probe: the test asks for the check
    admin = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with TcpProxy(6379) as proxy:
            url = proxy.url(int(redis_db.rsplit("/", 1)[1]))
            async with running(config(tmp_path, fake_llm, on_redis(url, "a")), clock=clock) as gw:
                job = await a_turn_cut_short(gw, proxy, fake_llm)
                await admin.flushdb()
                proxy.down = False  # back, without its data
                assert await gw.pipeline.held.check() == 1
                lock = await admin.get(f"cg:lock:{job.session}")
                assert lock == f"handoff:{job.msg.key}", lock
    finally:
        await admin.aclose()


async def test_a_turn_cut_short_is_not_forgotten_when_the_store_is_wiped_as_its_resume_reads(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a's turn fails on the state; Redis loses its data after the resume's check and before it
    reads the journal, so the resume finds nothing to take up. a still holds the message as
    cut short: the next check journals it again and it is answered (it was forgotten, and the
    user never answered)."""
    clock = ManualClock()  # the state probe runs when the test says
    admin = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with TcpProxy(6379) as proxy:
            url = proxy.url(int(redis_db.rsplit("/", 1)[1]))
            async with running(config(tmp_path, fake_llm, on_redis(url, "a")), clock=clock) as gw:
                await a_turn_cut_short(gw, proxy, fake_llm)
                fence = await admin.get(FENCE_KEY)
                await admin.flushdb()
                await admin.set(FENCE_KEY, str(fence))  # the loss not noticed by the check yet
                proxy.down = False
                assert await gw.pipeline.resume_stranded() == 0  # the journal read empty
                await admin.delete(FENCE_KEY)  # now the next check notices the loss
                assert await gw.pipeline.held.check() == 1

                async def answered() -> bool:
                    clock.advance(5.0)  # the state probe resumes it
                    return bool(memory(gw).sent)

                await eventually(answered, 30, "the message answered")
                assert len(fake_llm.requests) == 2
    finally:
        await admin.aclose()
