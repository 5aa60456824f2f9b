"""Edited messages (opt-in per channel): ignored, swapped in for the original while its turn
has not started, or answered as a new turn tagged as an edit. An edit never replays a command."""

from __future__ import annotations

from enum import StrEnum


class EditMode(StrEnum):
    """A channel's `edits` setting."""

    IGNORE = "ignore"
    REPLACE = "replace"
    NEW_TURN = "new_turn"


class EditAction(StrEnum):
    """What one edit becomes."""

    IGNORE = "ignore"  # recorded as edited_ignored, never answered
    REPLACE = "replace"  # takes the queued original's place; the original is dropped
    NEW_TURN = "new_turn"  # answered as a turn of its own


# InboundMessage.extra keys an adapter sets on an edit: the key of the message it changed, and
# the channel's mode (the gateway decides with the session queue in view).
EDIT_OF = "edit_of"
EDIT_MODE = "edit_mode"
# InboundMessage.extra key on a deletion (a redaction) of a message: the key of the message it
# withdraws. It is never a turn; the withdrawn message leaves its queue if its turn has not run.
RETRACTS = "retracts"


def reads_as_command(text: str, is_command: bool = False) -> bool:
    """Whether an edited text would act as a chat command (``/stop``, ``/new``, ...)."""
    return is_command or text.lstrip().startswith("/")


def edit_action(mode: EditMode, *, command: bool, original_queued: bool) -> EditAction:
    """What an edit becomes. ``replace`` swaps only an original still waiting in its session
    queue; once its turn started (or ended) the answer is under way, and a second answer to
    the same question would confuse more than help, so the edit is ignored. A text that reads
    as a command is never replayed, whatever the mode."""
    if mode is EditMode.IGNORE or command:
        return EditAction.IGNORE
    if mode is EditMode.REPLACE:
        return EditAction.REPLACE if original_queued else EditAction.IGNORE
    return EditAction.NEW_TURN


def edit_wanted(mode: EditMode, text: str, is_command: bool = False) -> bool:
    """Whether an adapter passes an edit on at all (the queue decides replace later)."""
    return edit_action(mode, command=reads_as_command(text, is_command), original_queued=True) in (
        EditAction.REPLACE,
        EditAction.NEW_TURN,
    )
