"""Reaction decisions: table-driven over mode, emoji, whose message it is and who reacted."""

from __future__ import annotations

import pytest

from chatgate.policies.reactions import ReactionMode, reaction_input, reaction_text

M = ReactionMode


@pytest.mark.parametrize(
    ("mode", "emoji", "on_answer", "from_bot", "expected"),
    [(M.TURN, "👍", True, False, M.TURN), (M.CONTEXT, "👍", True, False, M.CONTEXT),
     (M.IGNORE, "👍", True, False, M.IGNORE),
     (M.TURN, "", True, False, M.IGNORE),  # a removal
     (M.TURN, "👍", False, False, M.IGNORE),  # on someone else's message
     (M.TURN, "👍", True, True, M.IGNORE), (M.CONTEXT, "👍", True, True, M.IGNORE)],  # a bot
)  # fmt: skip
def test_reaction_input(
    mode: ReactionMode, emoji: str, on_answer: bool, from_bot: bool, expected: ReactionMode
) -> None:
    assert reaction_input(mode, emoji, on_answer, from_bot) is expected


def test_reaction_text() -> None:
    assert reaction_text(":+1:") == ":+1: on your answer"
