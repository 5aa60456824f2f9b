"""Tool policy: allow/deny globs, approvals, loop bounds, wire names, masking, result caps."""

from __future__ import annotations

import pytest

from chatgate.model.reasons import FailureReason
from chatgate.policies.tools import (
    MASK,
    Approval,
    LoopUsage,
    ToolLimits,
    approval_for,
    cap_text,
    mask_arguments,
    native_tool_calls,
    stop_reason,
    tool_allowed,
    wire_name,
)


@pytest.mark.parametrize(
    ("name", "allow", "deny", "expected"),
    [
        ("github.search", ["github.*"], [], True),
        ("github.delete_repo", ["github.*"], ["github.delete_*"], False),
        ("search.web", ["github.*", "search.web"], [], True),
        ("search.images", ["github.*", "search.web"], [], False),
        ("github.search", [], [], False),  # opt-in: nothing allowed by default
        ("github.search", ["*"], ["*"], False),  # deny wins
        ("GitHub.search", ["github.*"], [], False),  # case matters
    ],
)
def test_tool_allowed(name: str, allow: list[str], deny: list[str], expected: bool) -> None:
    assert tool_allowed(name, allow, deny) is expected


RULES = [("github.delete_*", Approval.DENY), ("github.*", Approval.AUTO), ("*", Approval.DENY)]


@pytest.mark.parametrize(
    ("name", "rules", "expected"),
    [
        ("github.delete_repo", RULES, Approval.DENY),
        ("github.search", RULES, Approval.AUTO),
        ("shell.run", RULES, Approval.DENY),
        ("shell.run", [], Approval.AUTO),
    ],
)
def test_first_matching_approval_wins(
    name: str, rules: list[tuple[str, Approval]], expected: Approval
) -> None:
    assert approval_for(name, rules) is expected


@pytest.mark.parametrize(
    ("usage", "limits", "expected"),
    [
        (LoopUsage(0, 0, 0.0), ToolLimits(1), None),
        (LoopUsage(1, 0, 0.0), ToolLimits(1), FailureReason.TOOL_LIMIT),
        (LoopUsage(0, 500, 0.0), ToolLimits(5, budget_tokens=500), FailureReason.TOOL_BUDGET),
        (LoopUsage(0, 499, 0.0), ToolLimits(5, budget_tokens=500), None),
        (LoopUsage(0, 0, 10.0), ToolLimits(5, budget_s=10.0), FailureReason.TOOL_BUDGET),
        (LoopUsage(5, 10_000, 99.0), ToolLimits(5, budget_tokens=1), FailureReason.TOOL_BUDGET),
    ],
)
def test_stop_reason(usage: LoopUsage, limits: ToolLimits, expected: FailureReason | None) -> None:
    assert stop_reason(usage, limits) is expected


@pytest.mark.parametrize(
    ("name", "taken", "expected"),
    [
        ("github.search_issues", (), "github__search_issues"),
        ("my server.do it!", (), "my_server__do_it_"),
        ("a.b", ("a__b",), "a__b_2"),
        ("x." + "y" * 80, (), ("x__" + "y" * 80)[:64]),
    ],
)
def test_wire_name(name: str, taken: tuple[str, ...], expected: str) -> None:
    assert wire_name(name, taken) == expected


def test_wire_name_long_collision_stays_within_64() -> None:
    first = wire_name("s." + "t" * 90)
    second = wire_name("s." + "t" * 91, [first])
    assert len(second) == 64 and second != first and second.endswith("_2")


def test_mask_arguments_by_key_and_by_known_secret_text() -> None:
    args = {
        "order_id": "42",
        "api_token": "tok-123",
        "headers": {"Authorization": "Bearer x", "Accept": "json"},
        "note": "use key sk-live-abcdef please",
        "items": [{"password": "p"}, 3],
    }
    masked = mask_arguments(args, ["sk-live-abcdef", "ab"])  # too-short texts are ignored
    assert masked == {
        "order_id": "42",
        "api_token": MASK,
        "headers": {"Authorization": MASK, "Accept": "json"},
        "note": f"use key {MASK} please",
        "items": [{"password": MASK}, 3],
    }


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("openai", True),
        ("anthropic", True),
        ("ollama_chat", True),
        ("ollama", False),
        ("huggingface", False),
    ],
)
def test_native_tool_calls(provider: str, expected: bool) -> None:
    assert native_tool_calls(provider) is expected


def test_cap_text_marks_the_cut() -> None:
    assert cap_text("short", 100) == "short"
    capped = cap_text("x" * 500, 100)
    assert len(capped) == 100 and capped.endswith("more characters]")
