"""Edit decisions: table-driven over mode, command-ness and whether the original still waits."""

from __future__ import annotations

import pytest

from chatgate.policies.edits import (
    EditAction,
    EditMode,
    edit_action,
    edit_wanted,
    reads_as_command,
)

A, M = EditAction, EditMode


@pytest.mark.parametrize(
    ("mode", "command", "queued", "expected"),
    [(M.IGNORE, False, True, A.IGNORE), (M.IGNORE, False, False, A.IGNORE),
     (M.REPLACE, False, True, A.REPLACE), (M.REPLACE, False, False, A.IGNORE),
     (M.NEW_TURN, False, True, A.NEW_TURN), (M.NEW_TURN, False, False, A.NEW_TURN),
     (M.REPLACE, True, True, A.IGNORE), (M.NEW_TURN, True, False, A.IGNORE),
     (M.IGNORE, True, True, A.IGNORE)],
)  # fmt: skip
def test_edit_action(mode: EditMode, command: bool, queued: bool, expected: EditAction) -> None:
    assert edit_action(mode, command=command, original_queued=queued) is expected


@pytest.mark.parametrize(
    ("text", "flag", "expected"),
    [("/stop", False, True), ("  /new please", False, True), ("stop", False, False),
     ("ok", True, True), ("a/b", False, False), ("", False, False)],
)  # fmt: skip
def test_reads_as_command(text: str, flag: bool, expected: bool) -> None:
    assert reads_as_command(text, flag) is expected


@pytest.mark.parametrize(
    ("mode", "text", "expected"),
    [(M.IGNORE, "fixed typo", False), (M.REPLACE, "fixed typo", True),
     (M.NEW_TURN, "fixed typo", True), (M.NEW_TURN, "/stop", False),
     (M.REPLACE, " /new", False)],
)  # fmt: skip
def test_edit_wanted(mode: EditMode, text: str, expected: bool) -> None:
    assert edit_wanted(mode, text) is expected
