"""Approval decisions: button values, yes/no replies, who may answer, what a press does."""

from __future__ import annotations

import pytest

from chatgate.model.reasons import ApprovalReason
from chatgate.policies.approvals import (
    ID_CHARS,
    Answer,
    ApprovalState,
    Deciders,
    approval_id,
    deciders_for,
    expired,
    judge,
    may_decide,
    parse_press,
    parse_reply,
    press_value,
    shown_arguments,
)

IDENT = "a" * ID_CHARS
USER = Deciders("telegram", "42", "42")
OPS = Deciders("slack", "COPS")


def test_ids_are_stable_and_tell_calls_apart() -> None:
    one = approval_id("telegram:42:7", "fake.add", {"a": 1, "b": 2}, 0)
    assert one == approval_id("telegram:42:7", "fake.add", {"b": 2, "a": 1}, 0)
    others = {
        approval_id("telegram:42:8", "fake.add", {"a": 1, "b": 2}, 0),
        approval_id("telegram:42:7", "fake.echo", {"a": 1, "b": 2}, 0),
        approval_id("telegram:42:7", "fake.add", {"a": 2, "b": 2}, 0),
        approval_id("telegram:42:7", "fake.add", {"a": 1, "b": 2}, 1),
    }
    assert one not in others and len(others) == 4
    assert len(one) == ID_CHARS and one.isalnum()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (press_value(True, IDENT), (True, IDENT)),
        (press_value(False, IDENT), (False, IDENT)),
        (f"apv:x:{IDENT}", None),
        ("apv:y:short", None),
        (f"apv:y:{'!' * ID_CHARS}", None),
        ("yes", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_press(value: str | None, expected: tuple[bool, str] | None) -> None:
    assert parse_press(value) == expected


def test_press_values_fit_telegram_callback_data() -> None:
    assert len(press_value(False, IDENT).encode()) <= 64


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yes", True),
        ("Yes!", True),
        (" y ", True),
        ("ok.", True),
        ("ja", True),
        ("Sí", True),
        ("¡si!", True),
        ("oui", True),
        ("Да", True),
        ("no", False),
        ("NEIN", False),
        ("non", False),
        ("нет", False),
        ("deny", False),
        ("yes please do it", None),
        ("maybe", None),
        ("", None),
        ("/yes", None),
    ],
)
def test_parse_reply(text: str, expected: bool | None) -> None:
    assert parse_reply(text) is expected


@pytest.mark.parametrize(
    ("deciders", "answer", "allowed"),
    [
        (USER, Answer("telegram", "42", "42", True), True),
        (USER, Answer("telegram", "42", "77", True), False),  # someone else in the chat
        (USER, Answer("telegram", "43", "42", True), False),  # the user, in another chat
        (USER, Answer("slack", "42", "42", True), False),  # same id on another channel
        (OPS, Answer("slack", "COPS", "U1", False), True),  # anyone in the operator chat
        (OPS, Answer("slack", "CDEV", "U1", False), False),
    ],
)
def test_may_decide(deciders: Deciders, answer: Answer, allowed: bool) -> None:
    assert may_decide(deciders, answer) is allowed


P, A, D, T = (
    ApprovalState.PENDING,
    ApprovalState.APPROVED,
    ApprovalState.DENIED,
    ApprovalState.TIMED_OUT,
)
YES = Answer("telegram", "42", "42", True)
NO = Answer("telegram", "42", "42", False)
OTHER = Answer("telegram", "42", "77", True)
EDITED = Answer("telegram", "42", "42", True, edited=True)


@pytest.mark.parametrize(
    ("state", "answer", "now", "expected"),
    [
        (P, YES, 10.0, ApprovalReason.APPROVED),
        (P, NO, 10.0, ApprovalReason.DENIED),
        (P, OTHER, 10.0, ApprovalReason.NOT_APPROVER),
        (P, EDITED, 10.0, ApprovalReason.EDITED),
        (P, YES, 100.0, ApprovalReason.ALREADY_DECIDED),  # expired: the timeout decides
        (A, NO, 10.0, ApprovalReason.ALREADY_DECIDED),
        (D, YES, 10.0, ApprovalReason.ALREADY_DECIDED),
        (T, YES, 10.0, ApprovalReason.ALREADY_DECIDED),
        (A, OTHER, 10.0, ApprovalReason.NOT_APPROVER),
        (None, YES, 10.0, ApprovalReason.UNKNOWN),
        (None, EDITED, 10.0, ApprovalReason.EDITED),
    ],
)
def test_judge(
    state: ApprovalState | None, answer: Answer, now: float, expected: ApprovalReason
) -> None:
    assert judge(state, 100.0, USER, answer, now) is expected


@pytest.mark.parametrize(
    ("now", "expires_at", "gone"), [(99.9, 100.0, False), (100.0, 100.0, True), (101, 100, True)]
)
def test_expired(now: float, expires_at: float, gone: bool) -> None:
    assert expired(now, expires_at) is gone


@pytest.mark.parametrize(
    ("approver", "reply_to", "expected"),
    [
        (
            None,
            ("telegram", "42", "t1"),
            (Deciders("telegram", "42", "7"), ("telegram", "42", "t1")),
        ),
        # a webhook delivering to a team chat: that chat decides
        (None, ("slack", "CDEV", None), (Deciders("slack", "CDEV"), ("slack", "CDEV", None))),
        (None, None, None),  # a sync webhook without a target: nobody to ask
        ("slack:COPS", None, (Deciders("slack", "COPS"), ("slack", "COPS", None))),
        (
            "slack:COPS:1700.1",
            ("telegram", "42", None),
            (Deciders("slack", "COPS"), ("slack", "COPS", "1700.1")),
        ),
    ],
)
def test_deciders_for(
    approver: str | None,
    reply_to: tuple[str, str, str | None] | None,
    expected: tuple[Deciders, tuple[str, str, str | None]] | None,
) -> None:
    assert deciders_for(approver, ("telegram", "42"), "7", reply_to) == expected


def test_shown_arguments_are_capped() -> None:
    assert shown_arguments({"b": 1, "a": "x"}) == '{"a": "x", "b": 1}'
    long = shown_arguments({"text": "z" * 5000}, limit=100)
    assert len(long) == 100 and long.endswith("…")


def test_deciders_round_trip() -> None:
    for deciders in (USER, OPS):
        assert Deciders.from_dict(deciders.to_dict()) == deciders
