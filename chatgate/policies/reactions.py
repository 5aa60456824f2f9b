"""Reactions as input (opt-in per channel): a user's reaction on one of the bot's answers is
ignored, kept as context for the next turn, or starts a turn ("👍 on your answer")."""

from __future__ import annotations

from enum import StrEnum


class ReactionMode(StrEnum):
    IGNORE = "ignore"
    CONTEXT = "context"
    TURN = "turn"


# InboundMessage.extra key: journal and keep the message as context, never answer it.
CONTEXT_ONLY = "context_only"


def reaction_input(
    mode: ReactionMode, emoji: str, on_bot_answer: bool, from_bot: bool = False
) -> ReactionMode:
    """What a reaction becomes: only an added emoji (not a removal) on the bot's own answer
    counts; the bot's own reactions never reach here (adapters drop self messages), and
    another bot's reaction is never input, so two bots cannot keep each other talking."""
    if not emoji or not on_bot_answer or from_bot:
        return ReactionMode.IGNORE
    return mode


def reaction_text(emoji: str) -> str:
    """The input the agent reads for a reaction."""
    return f"{emoji} on your answer"
