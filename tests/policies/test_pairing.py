"""Pairing codes: generation, issue limits and lockout-guarded approval."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.policies.pairing import (
    BAD_APPROVAL_WINDOW_S,
    CODE_LENGTH,
    CODE_TTL_S,
    LOCKOUT_S,
    MAX_BAD_APPROVALS,
    MAX_PENDING_PER_CHANNEL,
    PAIRING_ALPHABET,
    ApprovalDecision,
    ApprovalOutcome,
    IssueDecision,
    IssueOutcome,
    PendingCode,
    decide_approval,
    decide_issue,
    generate_code,
    normalize_code,
)

T0 = 10_000.0


def test_alphabet_has_no_lookalikes() -> None:
    assert not set("0O1IL") & set(PAIRING_ALPHABET)
    assert len(set(PAIRING_ALPHABET)) == len(PAIRING_ALPHABET)
    assert all(ch.isupper() or ch.isdigit() for ch in PAIRING_ALPHABET)
    assert CODE_LENGTH == 8


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("abcd-efgh", "ABCDEFGH"),
        ("  ABCD EFGH\n", "ABCDEFGH"),
        ("ab–cd—ef gh", "ABCDEFGH"),
        ("A-B-C-D", "ABCD"),
        ("", ""),
        ("   ", ""),
    ],
)
def test_normalize_code(raw: str, normal: str) -> None:
    assert normalize_code(raw) == normal


@pytest.mark.parametrize(
    ("age", "expired"),
    [(0.0, False), (CODE_TTL_S - 0.001, False), (CODE_TTL_S, True), (CODE_TTL_S + 5, True),
     (-50.0, False)],
)  # fmt: skip
def test_code_expiry(age: float, expired: bool) -> None:
    assert PendingCode("ABCDEFGH", "u1", T0).expired(T0 + age) is expired


def _pending(sender: str, code: str, age: float = 0.0) -> PendingCode:
    return PendingCode(code=code, sender_id=sender, issued_at=T0 - age)


LIVE3 = [_pending("a", "AAAAAAAA"), _pending("b", "BBBBBBBB"), _pending("c", "CCCCCCCC")]

# (case id, pending, sender, expected outcome, expected code or None for a fresh one)
ISSUE_CASES = [
    ("first", [], "u1", IssueOutcome.ISSUED, None),
    ("same-code-again", [_pending("u1", "KKKKKKKK", age=30)], "u1", IssueOutcome.EXISTING,
     "KKKKKKKK"),
    ("expired-own-code-replaced", [_pending("u1", "KKKKKKKK", age=CODE_TTL_S)], "u1",
     IssueOutcome.ISSUED, None),
    ("full-channel", LIVE3, "u9", IssueOutcome.TOO_MANY_PENDING, None),
    ("full-channel-still-repeats-own", LIVE3, "b", IssueOutcome.EXISTING, "BBBBBBBB"),
    ("expired-do-not-count", [*LIVE3[:2], _pending("c", "CCCCCCCC", age=CODE_TTL_S + 1)], "u9",
     IssueOutcome.ISSUED, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pending", "sender", "outcome", "code"),
    [pytest.param(*case[1:], id=case[0]) for case in ISSUE_CASES],
)
def test_decide_issue(
    pending: list[PendingCode], sender: str, outcome: IssueOutcome, code: str | None
) -> None:
    decision = decide_issue(pending, sender, T0, random.Random(7))
    assert decision.outcome == outcome
    if outcome is IssueOutcome.TOO_MANY_PENDING:
        assert decision.code is None
    elif code is not None:
        assert decision.code == code
    else:
        assert decision.code is not None
        assert decision.code not in {p.code for p in pending}
        assert len(decision.code) == CODE_LENGTH


def test_max_pending_constant_matches_table() -> None:
    assert len(LIVE3) == MAX_PENDING_PER_CHANNEL


class _Replay(random.Random):
    """A random source that first replays a fixed code, to force a collision."""

    def __init__(self, first: str) -> None:
        super().__init__(3)
        self._queue = list(first)

    def choice(self, seq):  # type: ignore[no-untyped-def,override]
        return self._queue.pop(0) if self._queue else super().choice(seq)


def test_new_code_never_collides_even_with_expired_codes() -> None:
    pending = [_pending("old", "ZZZZZZZZ", age=CODE_TTL_S * 3)]
    decision = decide_issue(pending, "u1", T0, _Replay("ZZZZZZZZ"))
    assert decision.outcome is IssueOutcome.ISSUED
    assert decision.code not in (None, "ZZZZZZZZ")


def test_generate_code_is_seeded() -> None:
    assert generate_code(random.Random(1)) == generate_code(random.Random(1))
    assert generate_code(random.Random(1)) != generate_code(random.Random(2))


@settings(max_examples=60)
@given(
    seed=st.integers(0, 2**32),
    pending_codes=st.lists(
        st.text(alphabet=PAIRING_ALPHABET, min_size=CODE_LENGTH, max_size=CODE_LENGTH),
        max_size=MAX_PENDING_PER_CHANNEL - 1,
    ),
    ages=st.lists(st.floats(0, CODE_TTL_S * 2), min_size=3, max_size=3),
)
def test_issued_codes_are_well_formed_and_unique(
    seed: int, pending_codes: list[str], ages: list[float]
) -> None:
    pending = [_pending(f"s{i}", c, ages[i]) for i, c in enumerate(pending_codes)]
    decision = decide_issue(pending, "newcomer", T0, random.Random(seed))
    assert decision.outcome is IssueOutcome.ISSUED
    assert decision.code is not None
    assert len(decision.code) == CODE_LENGTH
    assert set(decision.code) <= set(PAIRING_ALPHABET)
    assert decision.code not in pending_codes


CODE = "ABCDEFGH"
PENDING = [_pending("u1", CODE, age=60), _pending("u2", "HJKMNPQR", age=CODE_TTL_S + 1)]
FOUR_BAD = [T0 - 100.0 * i for i in range(1, MAX_BAD_APPROVALS)]
FIVE_BAD = [T0 - 100.0 * i for i in range(1, MAX_BAD_APPROVALS + 1)]
FIVE_SPREAD = [T0 - 1 - 250.0 * i for i in range(MAX_BAD_APPROVALS)]
FIVE_OLD = [T0 - BAD_APPROVAL_WINDOW_S - i for i in range(MAX_BAD_APPROVALS)]
LAST = max(FIVE_BAD)

APPROVAL_CASES = [
    ("approved", CODE, [], ApprovalDecision(ApprovalOutcome.APPROVED, sender_id="u1")),
    ("approved-normalized", "abcd-efgh", [], ApprovalDecision(ApprovalOutcome.APPROVED,
                                                              sender_id="u1")),
    ("unknown", "ZZZZZZZZ", [], ApprovalDecision(ApprovalOutcome.UNKNOWN_CODE)),
    ("blank", "  ", [], ApprovalDecision(ApprovalOutcome.UNKNOWN_CODE)),
    ("expired", "HJKMNPQR", [], ApprovalDecision(ApprovalOutcome.EXPIRED)),
    ("four-bad-still-ok", CODE, FOUR_BAD, ApprovalDecision(ApprovalOutcome.APPROVED,
                                                           sender_id="u1")),
    ("locked-even-right-code", CODE, FIVE_BAD,
     ApprovalDecision(ApprovalOutcome.LOCKED_OUT, locked_until=LAST + LOCKOUT_S)),
    ("locked-wrong-code", "ZZZZZZZZ", FIVE_BAD,
     ApprovalDecision(ApprovalOutcome.LOCKED_OUT, locked_until=LAST + LOCKOUT_S)),
    ("failures-spread-wider-than-window", CODE, FIVE_SPREAD,
     ApprovalDecision(ApprovalOutcome.APPROVED, sender_id="u1")),
    ("old-failures-forgotten", CODE, FIVE_OLD, ApprovalDecision(ApprovalOutcome.APPROVED,
                                                                sender_id="u1")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("code", "bad", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in APPROVAL_CASES],
)
def test_decide_approval(code: str, bad: list[float], expected: ApprovalDecision) -> None:
    assert decide_approval(PENDING, code, T0, bad) == expected


def test_lockout_ends_on_schedule() -> None:
    bad = [T0 + i for i in range(MAX_BAD_APPROVALS)]
    until = bad[-1] + LOCKOUT_S
    assert decide_approval(PENDING, CODE, until - 0.01, bad).outcome is ApprovalOutcome.LOCKED_OUT
    assert decide_approval(PENDING, CODE, until, bad).outcome is ApprovalOutcome.APPROVED


@pytest.mark.parametrize(
    ("outcome", "counts"),
    [(ApprovalOutcome.APPROVED, False), (ApprovalOutcome.UNKNOWN_CODE, True),
     (ApprovalOutcome.EXPIRED, True), (ApprovalOutcome.LOCKED_OUT, False)],
)  # fmt: skip
def test_counts_as_bad_attempt(outcome: ApprovalOutcome, counts: bool) -> None:
    assert ApprovalDecision(outcome).counts_as_bad_attempt is counts


def test_issue_then_approve_round_trip() -> None:
    rng = random.Random(11)
    issued = decide_issue([], "u7", T0, rng)
    assert issued == IssueDecision(IssueOutcome.ISSUED, issued.code)
    assert issued.code is not None
    pending = [PendingCode(issued.code, "u7", T0, sender_name="Ann")]
    typed = issued.code[:4].lower() + " - " + issued.code[4:]
    assert decide_approval(pending, typed, T0 + 5, []).sender_id == "u7"
