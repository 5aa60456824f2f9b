"""Classify an agent's final reply so every turn ends visibly or silently on purpose."""

from __future__ import annotations

from chatgate.model.reasons import OutcomeKind

SILENCE_MARKERS: frozenset[str] = frozenset({"NO_REPLY", "[SILENT]"})

# Some model stacks surface a turn that only called tools as this placeholder text.
_TOOL_CALL_PLACEHOLDER = "[tool_calls:"


def classify_final(text: str | None, markers: frozenset[str] = SILENCE_MARKERS) -> OutcomeKind:
    """SILENCE for an exact marker, EMPTY for blank or tool-call placeholder text, else TEXT.

    EMPTY is not deliberate: the gateway replies with the catalog's `reply.empty` text (or
    `gateway.empty_reply_text`) instead of dropping.
    """
    if text is None:
        return OutcomeKind.EMPTY
    stripped = text.strip()
    if stripped and stripped in markers:
        return OutcomeKind.SILENCE
    if not stripped or stripped.startswith(_TOOL_CALL_PLACEHOLDER):
        return OutcomeKind.EMPTY
    return OutcomeKind.TEXT
