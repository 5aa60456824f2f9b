"""The session queue keeps messages taken up from the journal in the order they came in: after a
kill -9 the restarted replica resumes a later message of a session that it still owned, and the
earlier one, held by the replica that died, is adopted a moment later; it goes first."""

from __future__ import annotations

import asyncio

from chatgate.feature.turns import TurnControl
from chatgate.gateway.intake.session_queue import SessionScheduler
from chatgate.gateway.turn.job import Job, JobKind
from chatgate.model.messages import InboundMessage
from chatgate.model.results import TurnResult


def job(text: str, received_at: float, *, resumed: bool) -> Job:
    msg = InboundMessage(
        "memory", "memory", "c1", "direct", "u1", text, text, received_at=received_at
    )
    future: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
    return Job(
        JobKind.TURN, msg, future, "default:memory:c1", "default", None, 0.0, resumed=resumed
    )


async def ran_in_order(jobs: list[Job]) -> list[str]:
    """Queue ``jobs`` one by one while the first one's turn runs; the order the turns ran in."""
    gate, seen = asyncio.Event(), []

    async def run(batch: list[Job], control: TurnControl) -> bool:
        await gate.wait()
        seen.extend(j.msg.text for j in batch)
        for j in batch:
            j.future.set_result(TurnResult(j.msg.key, "turn", "ok"))
        return True

    scheduler = SessionScheduler(run, policy="queue", max_queued=10)
    for j in jobs:
        scheduler.enqueue(j, capped=False)
        await asyncio.sleep(0)
    gate.set()
    await asyncio.wait_for(asyncio.gather(*(j.future for j in jobs)), 10)
    return seen


async def test_an_adopted_earlier_message_goes_before_a_later_one_resumed_here() -> None:
    jobs = [
        job("m0", 1.0, resumed=True),  # running
        job("m4", 5.0, resumed=True),  # resumed here (this replica owned it)
        job("live", 6.0, resumed=False),
        job("m3", 4.0, resumed=True),  # adopted from the replica that died
    ]
    assert await ran_in_order(jobs) == ["m0", "m3", "m4", "live"]


async def given_way(later: Job, earlier: Job) -> list[str]:
    """Runs ``later``'s turn until it waits at the lock (which waits for ``earlier``), then
    queues ``earlier``; the order the two turns ran in."""
    seen: list[str] = []
    waiting, released = asyncio.Event(), asyncio.Event()

    async def run(batch: list[Job], control: TurnControl) -> bool:
        if batch[0] is later and earlier.msg.text not in seen:  # at the lock
            waiting.set()
            await released.wait()
            if control.giving_way:
                return False
        seen.extend(j.msg.text for j in batch)
        for j in batch:
            j.future.set_result(TurnResult(j.msg.key, "turn", "ok"))
        return True

    scheduler = SessionScheduler(run, policy="queue", max_queued=10)
    scheduler.enqueue(later, capped=False)
    await asyncio.wait_for(waiting.wait(), 10)
    scheduler.enqueue(earlier, capped=False)
    released.set()
    await asyncio.wait_for(asyncio.gather(later.future, earlier.future), 10)
    return seen


async def test_a_turn_taken_up_later_gives_way_to_an_earlier_one_taken_up_meanwhile() -> None:
    """m4 (taken up from the journal) waits for the session's lock, which waits for m3; m3 is
    taken up here a moment later: m4's turn gives way and goes again behind it, not ahead."""
    later, earlier = job("m4", 5.0, resumed=True), job("m3", 4.0, resumed=True)
    assert await given_way(later, earlier) == ["m3", "m4"]


async def test_a_live_turn_waiting_for_the_lock_gives_way_to_an_earlier_message_placed_after() -> (
    None
):
    """Two messages of a session come in at once; the later one's journal write returns first, so
    its turn starts and waits for the session's lock, which waits for the earlier open one:
    queued behind it here, that one would wait a whole lock TTL (with two replicas, each one's
    earlier message behind the other's waiting turn). The waiting turn gives way instead."""
    later, earlier = job("m2", 2.0, resumed=False), job("m1", 1.0, resumed=False)
    assert await given_way(later, earlier) == ["m1", "m2"]


async def test_live_messages_queue_in_the_order_they_came_in_and_unknown_times_where_placed() -> (
    None
):
    jobs = [
        job("first", 1.0, resumed=False),  # running
        job("c", 4.0, resumed=False),
        job("b", 3.0, resumed=False),  # its journal write returned after c's
        job("b2", 3.0, resumed=False),  # a tie keeps the order of placing
        job("unknown", 0.0, resumed=False),  # no time: where it was placed
        job("a", 2.0, resumed=False),  # and nothing placed after it passes it
    ]
    assert await ran_in_order(jobs) == ["first", "b", "b2", "c", "unknown", "a"]
