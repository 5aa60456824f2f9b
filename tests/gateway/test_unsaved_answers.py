"""Answers kept after a failed state write: reused once, only for the same input, bounded."""

from __future__ import annotations

import pytest

from chatgate.agents.base import AgentReply
from chatgate.gateway.turn.unsaved import UnsavedAnswers

A, B = AgentReply(text="a"), AgentReply(text="b")


@pytest.mark.parametrize(
    ("kept", "asked", "found"),
    [
        ((["m1"], 4), (["m1"], 4), A),  # the same message and history: reused
        ((["m1"], 4), (["m1"], 6), None),  # the transcript grew meanwhile: asked again
        ((["m1", "m2"], 4), (["m1"], 4), None),  # another batch
        ((["m1"], 4), (["m2"], 4), None),
    ],
)
def test_an_answer_is_reused_only_for_the_same_input(
    kept: tuple[list[str], int], asked: tuple[list[str], int], found: AgentReply | None
) -> None:
    answers = UnsavedAnswers()
    answers.keep(*kept, A)
    assert answers.take(*asked) == found


def test_taken_once_and_the_oldest_dropped_past_the_bound() -> None:
    answers = UnsavedAnswers(size=2)
    answers.keep(["m1"], 0, A)
    answers.keep(["m2"], 0, B)
    answers.keep(["m3"], 0, A)
    assert len(answers) == 2 and answers.take(["m1"], 0) is None
    assert answers.take(["m2"], 0) == B and answers.take(["m2"], 0) is None
