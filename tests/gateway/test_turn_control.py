"""TurnControl: the agent runs inline in the session worker; cancelling it lands in the agent
call only, and leaves the worker able to run (and time out) later turns."""

from __future__ import annotations

import asyncio

import pytest

from chatgate.feature.turns import CancelReason, TurnControl


async def _worker(control: TurnControl, seen: list[CancelReason | None]) -> int:
    never = asyncio.Event()
    control.enter_agent()
    try:
        await never.wait()  # the agent call
    except asyncio.CancelledError:
        seen.append(control.reason)
    finally:
        control.leave_agent()
    task = asyncio.current_task()
    assert task is not None
    # A later turn's timeout still works in the same worker.
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0):
            await never.wait()
    return task.cancelling()


@pytest.mark.parametrize(
    ("reasons", "final"),
    [
        ([CancelReason.STOP], CancelReason.STOP),
        ([CancelReason.INTERRUPT, CancelReason.STOP], CancelReason.STOP),
        ([CancelReason.SHUTDOWN, CancelReason.SHUTDOWN], CancelReason.SHUTDOWN),
    ],
)
async def test_cancel_lands_in_the_agent_call_and_is_undone(
    reasons: list[CancelReason], final: CancelReason
) -> None:
    control = TurnControl()
    seen: list[CancelReason | None] = []
    task = asyncio.create_task(_worker(control, seen))
    await asyncio.sleep(0)  # the worker is now inside the agent call
    assert all(control.cancel(r) for r in reasons)
    assert await task == 0  # every cancel of ours was taken back
    assert seen == [final]
    assert control.cancel(CancelReason.STOP) is False  # no agent call: nothing to cancel


async def test_nothing_to_cancel_outside_the_agent_call() -> None:
    assert TurnControl().cancel(CancelReason.INTERRUPT) is False
