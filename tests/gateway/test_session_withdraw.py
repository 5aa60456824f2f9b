"""SessionScheduler.withdraw: a deleted message leaves whichever queue holds it while its turn
has not started; a running or unknown one is not touched."""

from __future__ import annotations

import asyncio

from chatgate.gateway.intake.session_queue import SessionScheduler
from tests.gateway.test_session_hold import Runs, job


async def test_a_waiting_turn_is_withdrawn_and_a_running_one_is_not() -> None:
    runs = Runs()
    scheduler = SessionScheduler(runs, policy="queue", max_queued=10)
    first, second, third = job("c1", "first"), job("c1", "second"), job("c2", "third")
    for j in (first, second, third):
        scheduler.enqueue(j)
    await asyncio.sleep(0)
    assert scheduler.withdraw(first.msg.key) is None  # its turn is running
    assert scheduler.withdraw(second.msg.key) is second
    assert scheduler.withdraw(second.msg.key) is None  # already gone
    assert scheduler.withdraw("memory:unknown") is None
    runs.before.set()
    runs.finish.set()
    await first.future
    await third.future
    assert sorted(t for _, texts in runs.seen for t in texts) == ["first", "third"]
    assert not second.future.done()  # its settling is the caller's (the intake stage)
