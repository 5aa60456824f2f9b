"""SessionScheduler.hold: a paused chat's waiting turns are replaced in place, other chats' work
is untouched, and with ``interrupt`` the running agent call is cancelled (also one that had not
begun yet) and its batch comes back held."""

from __future__ import annotations

import asyncio

from chatgate.feature.ports import HeldAs
from chatgate.feature.turns import CancelReason, TurnControl
from chatgate.gateway.intake.session_queue import SessionScheduler
from chatgate.gateway.turn.job import Job, JobKind
from chatgate.model.messages import InboundMessage
from chatgate.model.results import TurnResult


def job(chat: str, text: str, kind: JobKind = JobKind.TURN) -> Job:
    msg = InboundMessage(
        channel="memory",
        platform="memory",
        chat_id=chat,
        chat_kind="direct",
        sender_id="u1",
        message_id=text,
        text=text,
        received_at=0.0,
    )
    future: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
    return Job(kind, msg, future, f"default:memory:{chat}", "default", None, 0.0)


HELD_SEEN: list[str] = []
held = HeldAs("paused", kept=lambda msg: True, on_held=lambda msg: HELD_SEEN.append(msg.text))


def in_c1(msg: InboundMessage) -> bool:
    return msg.chat_id == "c1"


class Runs:
    """An executor: a turn waits at `before` (its steps before the agent), then in the agent
    call until `finish` or a cancel; every batch is recorded as (kind, texts)."""

    def __init__(self) -> None:
        self.before = asyncio.Event()
        self.finish = asyncio.Event()
        self.in_agent = asyncio.Event()
        self.seen: list[tuple[str, list[str]]] = []
        self.cancelled: list[CancelReason | None] = []

    async def __call__(self, batch: list[Job], control: TurnControl) -> bool:
        self.seen.append((batch[0].kind.value, [j.msg.text for j in batch]))
        if batch[0].kind is JobKind.TURN:
            await self.before.wait()
            control.enter_agent()
            try:
                self.in_agent.set()
                await self.finish.wait()
            except asyncio.CancelledError:
                self.cancelled.append(control.reason)
                if control.reason is CancelReason.HOLD:
                    return False  # the batch runs again, held (as a RETRY exit does)
            finally:
                control.leave_agent()
        for j in batch:
            j.future.set_result(TurnResult(j.msg.key, batch[0].kind.value, j.observed))
        return True


async def test_waiting_turns_of_the_chat_are_replaced_in_place_and_the_running_one_goes_on() -> (
    None
):
    runs = Runs()
    scheduler = SessionScheduler(runs, policy="queue", max_queued=10)
    jobs = [
        job("c1", "first"),
        job("c1", "second"),
        job("c1", "/new", JobKind.NEW_SESSION),
        job("c2", "other"),
        job("c2", "other 2"),
    ]
    for j in jobs:
        scheduler.enqueue(j)
    await asyncio.sleep(0)
    assert scheduler.hold(in_c1, held, interrupt=False) == (2, 0)
    runs.before.set()
    runs.finish.set()
    results = [await j.future for j in jobs]
    assert [(r.stage, r.reason) for r in results] == [
        ("turn", "observe"),  # the running turn was answered
        ("observe", "paused"),
        ("observe", "paused"),
        ("turn", "observe"),  # another chat's work is untouched
        ("turn", "observe"),
    ]
    assert runs.cancelled == []
    assert [s for s in runs.seen if s[1][0] in ("first", "second", "/new")] == [
        ("turn", ["first"]),
        ("observe", ["second"]),
        ("observe", ["/new"]),
    ]


async def test_interrupt_cancels_the_running_call_and_the_batch_comes_back_held() -> None:
    runs = Runs()
    scheduler = SessionScheduler(runs, policy="queue", max_queued=10)
    first, second = job("c1", "first"), job("c1", "second")
    scheduler.enqueue(first)
    scheduler.enqueue(second)
    runs.before.set()
    await runs.in_agent.wait()
    assert scheduler.hold(in_c1, held, interrupt=True) == (1, 1)
    results = [await first.future, await second.future]
    assert [r.reason for r in results] == ["paused", "paused"]
    assert runs.cancelled == [CancelReason.HOLD]
    assert runs.seen == [("turn", ["first"]), ("observe", ["first"]), ("observe", ["second"])]


async def test_interrupt_before_the_agent_call_begins_lands_as_it_begins() -> None:
    runs = Runs()
    scheduler = SessionScheduler(runs, policy="queue", max_queued=10)
    first = job("c1", "first")
    scheduler.enqueue(first)
    await asyncio.sleep(0)  # the turn runs its steps before the agent call
    assert scheduler.hold(in_c1, held, interrupt=True) == (0, 1)
    runs.before.set()
    assert (await first.future).reason == "paused"
    assert runs.cancelled == [CancelReason.HOLD]


async def test_a_pending_cancel_is_only_for_a_hold() -> None:
    control = TurnControl()
    assert control.cancel(CancelReason.STOP) is False  # /stop with no agent call: nothing
    assert control.cancel(CancelReason.HOLD, pending=True) is True


async def test_nothing_to_hold_once_the_agent_call_ended() -> None:
    control = TurnControl()
    control.enter_agent()
    control.leave_agent()  # the answer is being concluded and delivered: it goes out
    assert control.cancel(CancelReason.HOLD, pending=True) is False
