"""DM pairing: short one-time codes an operator approves to let an unknown sender in.

Pure decisions over the pending codes and failed-approval timestamps the gateway persists;
the gateway stores whatever these functions return.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from chatgate.secure_compare import secure_equals

# Uppercase letters and digits minus the look-alikes 0/O, 1/I/L, so codes survive being read
# aloud or retyped from a phone screen.
PAIRING_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
CODE_TTL_S = 3600.0
MAX_PENDING_PER_CHANNEL = 3
MAX_BAD_APPROVALS = 5
BAD_APPROVAL_WINDOW_S = 900.0
LOCKOUT_S = 900.0

_MAX_GENERATION_TRIES = 1000
_SEPARATORS = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2212_")


def generate_code(rng: random.Random) -> str:
    """Draw a fresh code from the unambiguous alphabet."""
    return "".join(rng.choice(PAIRING_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(raw: str) -> str:
    """Canonical form of a typed code: uppercase, without whitespace or dashes."""
    return "".join(ch for ch in raw.upper() if not ch.isspace() and ch not in _SEPARATORS)


@dataclass(frozen=True)
class PendingCode:
    """A code issued to a sender and not yet approved."""

    code: str
    sender_id: str
    issued_at: float
    sender_name: str = ""

    def expired(self, now: float) -> bool:
        """True once the code has outlived CODE_TTL_S."""
        return now >= self.issued_at + CODE_TTL_S


class IssueOutcome(StrEnum):
    """Result of asking for a pairing code."""

    ISSUED = "issued"
    EXISTING = "existing"
    TOO_MANY_PENDING = "too_many_pending"


@dataclass(frozen=True)
class IssueDecision:
    """Which code (if any) to send back to the sender."""

    outcome: IssueOutcome
    code: str | None


def decide_issue(
    pending: Sequence[PendingCode], sender_id: str, now: float, rng: random.Random
) -> IssueDecision:
    """Issue a code, repeat the sender's live one, or refuse when the channel is saturated.

    Expired codes neither count toward the limit nor get reused, but a new code still never
    equals any code in ``pending`` so an approval can't be ambiguous.
    """
    live = [p for p in pending if not p.expired(now)]
    for entry in live:
        if entry.sender_id == sender_id:
            return IssueDecision(IssueOutcome.EXISTING, entry.code)
    if len(live) >= MAX_PENDING_PER_CHANNEL:
        return IssueDecision(IssueOutcome.TOO_MANY_PENDING, None)
    taken = {normalize_code(p.code) for p in pending}
    for _ in range(_MAX_GENERATION_TRIES):
        code = generate_code(rng)
        if code not in taken:
            return IssueDecision(IssueOutcome.ISSUED, code)
    raise RuntimeError("random source keeps producing pending pairing codes")


class ApprovalOutcome(StrEnum):
    """Result of an operator approving a code."""

    APPROVED = "approved"
    UNKNOWN_CODE = "unknown_code"
    EXPIRED = "expired"
    LOCKED_OUT = "locked_out"


@dataclass(frozen=True)
class ApprovalDecision:
    """Approval verdict; ``sender_id`` is set only when APPROVED."""

    outcome: ApprovalOutcome
    sender_id: str | None = None
    locked_until: float | None = None

    @property
    def counts_as_bad_attempt(self) -> bool:
        """Whether the caller should record this attempt toward the lockout.

        Refusals during a lockout are not recorded, so the lockout ends on schedule.
        """
        return self.outcome in (ApprovalOutcome.UNKNOWN_CODE, ApprovalOutcome.EXPIRED)


def lockout_until(bad_attempts: Sequence[float], now: float) -> float | None:
    """End of the current lockout, or None when approvals are allowed.

    A lockout starts whenever MAX_BAD_APPROVALS failures fall within one window and lasts
    LOCKOUT_S from the last of them. Attempts older than window + lockout can be pruned.
    """
    ordered = sorted(bad_attempts)
    span = MAX_BAD_APPROVALS - 1
    until: float | None = None
    for last_index in range(span, len(ordered)):
        last = ordered[last_index]
        if last - ordered[last_index - span] < BAD_APPROVAL_WINDOW_S:
            until = last + LOCKOUT_S
    return until if until is not None and now < until else None


def decide_approval(
    pending: Sequence[PendingCode], code: str, now: float, bad_attempts: Sequence[float]
) -> ApprovalDecision:
    """Approve a typed code; the lockout is checked before the code so guessing can't succeed."""
    until = lockout_until(bad_attempts, now)
    if until is not None:
        return ApprovalDecision(ApprovalOutcome.LOCKED_OUT, locked_until=until)
    wanted = normalize_code(code)
    if not wanted:
        return ApprovalDecision(ApprovalOutcome.UNKNOWN_CODE)
    found_expired = False
    for entry in pending:
        if not secure_equals(normalize_code(entry.code), wanted):
            continue
        if not entry.expired(now):
            return ApprovalDecision(ApprovalOutcome.APPROVED, sender_id=entry.sender_id)
        found_expired = True
    if found_expired:
        return ApprovalDecision(ApprovalOutcome.EXPIRED)
    return ApprovalDecision(ApprovalOutcome.UNKNOWN_CODE)
