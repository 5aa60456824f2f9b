"""A supervised channel's state is all there is to wait on: waiters keyed by state, and the
operator's restart as a move in the transition table."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chatgate.gateway.supervision.supervised import ChannelStatus, Supervised
from chatgate.policies.channel_states import ChannelState
from chatgate.policies.supervision import RestartBudget
from tests.harness import memory, running, write_config
from tests.support.waiting import eventually

S = ChannelState


def supervised(state: ChannelState) -> Supervised:
    adapter: object = None  # the waiters never touch the adapter
    return Supervised(adapter, ChannelStatus("c", "memory", state, 0.0), RestartBudget(3))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("start", "waits_for", "moves", "woken_at"),
    [
        (S.RUNNING, {S.RUNNING}, [], 0),  # already there: returns at once
        (S.STOPPED, {S.RUNNING}, [S.STARTING, S.RUNNING], 2),
        (S.STARTING, {S.RUNNING}, [S.BACKOFF, S.PARKED], None),  # never entered
        (S.BACKOFF, set(S) - {S.BACKOFF}, [S.BACKOFF, S.RESTARTING], 2),
    ],
)
async def test_a_waiter_wakes_when_the_channel_enters_one_of_its_states(
    start: ChannelState,
    waits_for: set[ChannelState],
    moves: list[ChannelState],
    woken_at: int | None,
) -> None:
    s = supervised(start)
    waiter = asyncio.ensure_future(s.until(waits_for))
    await asyncio.sleep(0)
    woken = 0 if waiter.done() else None
    for step, state in enumerate(moves, 1):
        s.enter(state)
        await asyncio.sleep(0)
        if woken is None and waiter.done():
            woken = step
    assert woken == woken_at
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    assert s._waiters == []  # a cancelled (timed-out) waiter leaves nothing behind


async def test_left_waits_until_the_state_is_none_of_those_named() -> None:
    s = supervised(S.PARKED)
    waiter = asyncio.ensure_future(s.left(S.PARKED, S.NOT_CONFIGURED))
    s.enter(S.NOT_CONFIGURED)
    await asyncio.sleep(0)
    assert not waiter.done()
    s.enter(S.RESTARTING)
    await asyncio.wait_for(waiter, 1)


def config(tmp_path: Path) -> Path:
    return write_config(
        tmp_path,
        """agents:
  default: {backend: echo}
channels:
  memory: {dm_policy: open}
""",
    )


async def test_a_restart_asked_during_a_slow_start_starts_again_without_a_failure(
    tmp_path: Path,
) -> None:
    async with running(config(tmp_path)) as gw:
        status = gw.channels.statuses["memory"]
        adapter = memory(gw)
        await eventually(lambda: status.state is S.RUNNING, what="running")
        gate = adapter.start_gate = asyncio.Event()
        await gw.channels.restart("memory")
        await eventually(lambda: adapter.started == 2, what="starting again")
        assert status.state is S.STARTING
        await gw.channels.restart("memory")  # while the start hangs
        assert gw.channels.statuses["memory"].state is S.RESTARTING
        gate.set()
        await eventually(lambda: adapter.started == 3, what="started once more")
        await eventually(lambda: status.state is S.RUNNING, what="running again")
        assert status.restarts == 0 and status.error == ""


async def test_restarts_asked_at_once_restart_once(tmp_path: Path) -> None:
    async with running(config(tmp_path)) as gw:
        s = gw.channels.channels["memory"]
        adapter = memory(gw)
        await eventually(lambda: s.state is S.RUNNING, what="running")
        for _ in range(3):  # restarting already: not in the table, ignored
            await gw.channels.restart("memory")
        assert s.state is S.RESTARTING
        await eventually(lambda: adapter.started == 2, what="started again")
        await eventually(lambda: s.state is S.RUNNING, what="running again")
        assert adapter.started == 2
