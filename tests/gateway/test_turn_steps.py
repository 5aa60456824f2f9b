"""The turn as named steps: the pure outcome decisions (table-driven), the exit values, and the
steps' order and slots on a real gateway."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from chatgate.agents.base import AgentError, AgentReply
from chatgate.config.models import GatewaySection
from chatgate.feature.turns import CancelReason
from chatgate.gateway.turn.conclusion import Outcome, answered, decide, to_persist
from chatgate.gateway.turn.record import CANCEL_EXITS, TurnExit, TurnRecord
from chatgate.model.chat import ChatMessage
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import DeliveryStatus, FailureReason, OutcomeKind
from chatgate.texts.voice import Voice
from tests.fakes.llm import FakeLLM
from tests.gateway.test_chat_pipeline import chat_config
from tests.harness import memory, running, write_config

GATEWAY = GatewaySection(empty_reply_text="(nothing to say)")
NEW = [ChatMessage("user", "hi", "Ann", "memory:1")]


def reply(text: str) -> AgentReply:
    return AgentReply(text=text, model="m")


@pytest.mark.parametrize(
    ("agent_reply", "failure", "kind", "text", "reason"),
    [
        (reply("hello"), None, OutcomeKind.TEXT, "hello", "text"),
        (reply("NO_REPLY"), None, OutcomeKind.SILENCE, None, "silence"),
        (reply("   "), None, OutcomeKind.EMPTY, "(nothing to say)", "empty"),
        (None, AgentError(FailureReason.TIMEOUT, "slow"), OutcomeKind.FAILURE, ..., "timeout"),
        (None, None, OutcomeKind.FAILURE, ..., "unknown"),
    ],
)
def test_decide(
    agent_reply: AgentReply | None,
    failure: AgentError | None,
    kind: OutcomeKind,
    text: str | None,
    reason: str,
) -> None:
    got_kind, message, got_reason = decide(agent_reply, failure, GATEWAY, Voice())
    assert (got_kind, got_reason) == (kind, reason)
    if text is ...:  # a failure reply: some visible text naming what to do
        assert message is not None and message.plain_text
    else:
        assert (message.plain_text if message else None) == text


SHOWN = OutboundMessage.from_text("shown")


@pytest.mark.parametrize(
    ("outcome", "shown", "unsent"),
    [
        (Outcome(OutcomeKind.TEXT, SHOWN, "text"), SHOWN, DeliveryStatus.NO_TARGET),
        (Outcome(OutcomeKind.SILENCE, None, "silence"), None, DeliveryStatus.SUPPRESSED),
        (Outcome(OutcomeKind.TEXT, SHOWN, "text", stopped=True), None, DeliveryStatus.SUPPRESSED),
        (
            Outcome(OutcomeKind.FAILURE, SHOWN, "cancelled", stopped=True),
            None,
            DeliveryStatus.SUPPRESSED,
        ),
        (Outcome(OutcomeKind.FAILURE, SHOWN, "timeout"), SHOWN, DeliveryStatus.NO_TARGET),
    ],
)
def test_outcome_shows_and_marks(outcome: Outcome, shown: object, unsent: DeliveryStatus) -> None:
    assert outcome.shown is shown
    assert outcome.unsent is unsent


@pytest.mark.parametrize(
    ("agent_reply", "failure", "kind", "roles"),
    [
        (reply("hello"), None, OutcomeKind.TEXT, ["user", "assistant"]),
        (reply("NO_REPLY"), None, OutcomeKind.SILENCE, ["user", "assistant"]),
        (reply(""), None, OutcomeKind.EMPTY, ["user"]),
        (None, AgentError(FailureReason.TIMEOUT, "slow"), OutcomeKind.FAILURE, ["user"]),
        (None, AgentError(FailureReason.CANCELLED, "stop"), OutcomeKind.FAILURE, []),
    ],
)
def test_to_persist(
    agent_reply: AgentReply | None, failure: AgentError | None, kind: OutcomeKind, roles: list[str]
) -> None:
    kept = to_persist(NEW, kind, agent_reply, failure)
    assert [m.role for m in kept] == roles
    assert all(m.source == "memory:1" for m in kept)  # the reply is filed under the message


def test_answered_is_what_a_restart_resends() -> None:
    outcome = Outcome(OutcomeKind.TEXT, SHOWN, "text", stopped=False)
    kept = answered(outcome, NEW)
    assert kept["outcome"] == "text" and kept["reason"] == "text" and kept["stopped"] is False
    assert kept["persist"] == [NEW[0].to_dict()] and kept["message"] is not None


@pytest.mark.parametrize(
    ("reason", "exit", "ran"),
    [
        (CancelReason.INTERRUPT, TurnExit.RETRY, False),
        (CancelReason.SHUTDOWN, TurnExit.LEFT_PENDING, True),
        (CancelReason.STOP, None, True),  # not an exit: the turn goes on to the /stop reply
    ],
)
def test_cancel_reasons_are_exit_values(
    reason: CancelReason, exit: TurnExit | None, ran: bool
) -> None:
    assert CANCEL_EXITS.get(reason) is exit
    assert (exit.ran if exit is not None else True) is ran
    assert TurnExit.SETTLED.ran


async def test_steps_in_order_and_the_prepare_input_slot(tmp_path: Path, fake_llm: FakeLLM) -> None:
    """A step in the prepare_input slot sees the new messages before the agent does (where
    attachment work goes), on the real path."""
    async with running(chat_config(tmp_path, fake_llm)) as gw:
        steps = gw.pipeline.runner.steps
        assert [s.__name__ for s in steps.held] == [
            "open",
            "prepare",
            "budget",
            "prepare_input",
            "call_agent",
            "conclude",
            "deliver",  # under the turn lock: the session's order holds across replicas
        ]
        assert [s.__name__ for s in steps.after] == ["announce"]

        async def shout(rec: TurnRecord) -> TurnExit | None:
            assert rec.session is not None and rec.adapter is not None  # after open + prepare
            rec.new = [replace(m, content=m.content.upper()) for m in rec.new]
            return None

        held = list(steps.held)
        held[held.index(steps.prepare_input)] = shout
        steps.held = tuple(held)
        chat = memory(gw)
        sub = await chat.inject("quiet words")
        await sub.result
    assert chat.texts() == ["echo: QUIET WORDS"]


async def test_a_turn_enters_only_the_steps_that_do_something_for_it(tmp_path: Path) -> None:
    """The budget step only with budget rules, the media step only with attachments; a step
    put in their place is always entered (the plan leaves out only the built-in no-ops)."""
    path = write_config(
        tmp_path, "agents:\n  default: {backend: echo}\nchannels:\n  memory: {dm_policy: open}\n"
    )
    async with running(path) as gw:
        steps = gw.pipeline.runner.steps
        for metered, media in itertools.product((False, True), repeat=2):
            assert steps.applies(steps.budget, metered, media) is metered
            assert steps.applies(steps.prepare_input, metered, media) is media
            assert steps.applies(steps.call_agent, metered, media)

        async def shout(rec: TurnRecord) -> TurnExit | None:
            return None

        assert steps.applies(shout, False, False)


async def test_a_turn_without_a_model_call_records_no_usage(tmp_path: Path) -> None:
    """The echo agent calls no model: no zero usage in the journal's answer or the transcript
    (encoded on every such turn, shown nowhere)."""
    path = write_config(
        tmp_path, "agents:\n  default: {backend: echo}\nchannels:\n  memory: {dm_policy: open}\n"
    )
    async with running(path) as gw:
        chat = memory(gw)
        await (await chat.inject("hello", sender_id="ann")).result
        entry = await gw.rt.journal.get("memory:m1")
        stored = await gw.rt.state.sessions.load(entry.session or "", 10) if entry else None
    assert entry is not None and entry.reply is not None
    assert "usage" not in entry.reply
    assert stored is not None and [m.role for m in stored.messages] == ["user", "assistant"]
    assert all(not m.meta for m in stored.messages)
