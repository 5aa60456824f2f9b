"""Tool effects and taint: annotations and overrides decide read/write; a tainted turn asks
before a write tool that would otherwise run; transcript lines say what tainted them."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import ToolAnnotations

from chatgate.policies.taint import (
    Effect,
    ToolHints,
    effect_of,
    guarded,
    history_taint,
    refusal,
    untrusted_output,
)
from chatgate.policies.tools import Approval

READ_ONLY = ToolHints(read_only=True)


@pytest.mark.parametrize(
    ("name", "hints", "overrides", "effect"),
    [
        ("time.now", READ_ONLY, (), Effect.READ),
        ("time.now", ToolHints(read_only=True, destructive=True), (), Effect.WRITE),
        ("fs.delete", ToolHints(destructive=True), (), Effect.WRITE),
        ("fs.write", ToolHints(read_only=False, destructive=False), (), Effect.WRITE),
        ("x.unknown", ToolHints(), (), Effect.WRITE),  # the server said nothing
        ("x.unknown", ToolHints(), (("x.*", Effect.READ),), Effect.READ),  # the operator says
        ("time.now", READ_ONLY, (("time.*", Effect.WRITE),), Effect.WRITE),
        ("time.now", READ_ONLY, (("fs.*", Effect.WRITE),), Effect.READ),  # no match
    ],
)
def test_effect_of(
    name: str, hints: ToolHints, overrides: tuple[tuple[str, Effect], ...], effect: Effect
) -> None:
    assert effect_of(name, hints, overrides) is effect


@pytest.mark.parametrize(
    ("annotations", "hints"),
    [
        (None, ToolHints()),
        (ToolAnnotations(readOnlyHint=True), ToolHints(read_only=True)),
        (ToolAnnotations(destructiveHint=True, openWorldHint=True), ToolHints(None, True, True)),
        ({"readOnlyHint": False, "openWorldHint": "yes"}, ToolHints(read_only=False)),
    ],
)
def test_hints_from_mcp_annotations(annotations: Any, hints: ToolHints) -> None:
    assert ToolHints.from_annotations(annotations) == hints


@pytest.mark.parametrize(
    ("hints", "globs", "untrusted"),
    [
        (ToolHints(open_world=True), (), True),
        (ToolHints(open_world=False), (), False),
        (ToolHints(), ("web.*",), True),
        (ToolHints(), ("mail.*",), False),
    ],
)
def test_untrusted_output(hints: ToolHints, globs: tuple[str, ...], untrusted: bool) -> None:
    assert untrusted_output("web.fetch", hints, globs) is untrusted


@pytest.mark.parametrize(
    ("approval", "effect", "taint", "result"),
    [
        (Approval.AUTO, Effect.WRITE, ("document",), Approval.ASK),
        (Approval.AUTO, Effect.WRITE, (), Approval.AUTO),
        (Approval.AUTO, Effect.READ, ("document",), Approval.AUTO),
        (Approval.DENY, Effect.WRITE, ("document",), Approval.DENY),
        (Approval.ASK, Effect.READ, (), Approval.ASK),
    ],
)
def test_a_tainted_turn_asks_before_a_write(
    approval: Approval, effect: Effect, taint: tuple[str, ...], result: Approval
) -> None:
    assert guarded(approval, effect, taint) is result


def test_history_taint_names_each_source_once_in_order() -> None:
    metas = [
        None,
        {"taint": "observed"},
        {"media": [{"name": "a.pdf", "kind": "document", "reason": "document_text"}]},
        {"media": [{"name": "p.png", "kind": "photo", "reason": "image_part"}]},
        {"taint": "observed"},
        {"taint": "made_up"},
    ]
    assert history_taint(metas) == ("observed", "document")
    assert history_taint([None, {}]) == ()


def test_the_refusal_tells_the_model_why() -> None:
    text = refusal("fs.delete_all", ("tool_output:web.fetch",))
    assert text.startswith("error:") and "tool_output:web.fetch" in text
    assert "approval" in text and "did not run" in text
