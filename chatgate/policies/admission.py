"""Admission ladder: should the gateway run an agent turn for this inbound message?

One pure decision shared by every channel adapter, so "why did the bot ignore me?" always has a
recorded reason and gate instead of per-platform ad-hoc checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from chatgate.model.frozen import record
from chatgate.model.messages import ChatKind
from chatgate.model.reasons import AdmissionReason, Gate

DmPolicy = Literal["open", "pairing", "allowlist", "disabled"]
GroupPolicy = Literal["respond_all", "mention_only", "command_only", "observe"]

_DIRECT_NATIVE_KINDS = frozenset({"private", "dm", "im", "direct", "webhook"})


def normalize_chat_kind(native: str) -> ChatKind:
    """Map a platform's native chat type to a ChatKind; unknown types count as groups."""
    kind = native.strip().lower()
    if kind in _DIRECT_NATIVE_KINDS:
        return "direct"
    if kind == "channel":
        return "channel"
    return "group"


@dataclass(frozen=True)
class AdmissionPolicy:
    """Operator configuration for one channel's admission ladder."""

    dm_policy: DmPolicy = "pairing"
    group_policy: GroupPolicy | None = None
    allowed_users: frozenset[str] = frozenset()
    blocked_users: frozenset[str] = frozenset()
    allowed_chats: frozenset[str] = frozenset()


@record
class AdmissionFacts:
    """What the adapter knows about one inbound message."""

    chat_kind: ChatKind
    sender_id: str
    chat_id: str
    is_mention: bool = False
    is_command: bool = False
    paired: bool = False


@record
class AdmissionDecision:
    """Verdict: admit or not, with the reason and the gate that decided.

    ``observe`` asks the gateway to record the message as passive context without a turn;
    ``issue_pairing_code`` asks it to start (or repeat) the pairing handshake.
    """

    admit: bool
    reason: AdmissionReason
    gate: Gate
    observe: bool = False
    issue_pairing_code: bool = False


def is_listed(sender_id: str, entries: frozenset[str]) -> bool:
    """Whether ``sender_id`` is in ``entries``: exactly, or (a mail address) by an ``@domain``
    entry naming its whole domain: ``@example.org`` admits ``a@example.org``, never
    ``a@notexample.org`` nor ``a@sub.example.org``. Mail addresses compare without case."""
    if sender_id in entries:
        return True
    if "@" not in sender_id or not entries:
        return False
    lowered = sender_id.lower()
    domain = "@" + lowered.rpartition("@")[2]
    return any(e.lower() in (domain, lowered) for e in entries if "@" in e)


def _deny(reason: AdmissionReason, gate: Gate) -> AdmissionDecision:
    return AdmissionDecision(admit=False, reason=reason, gate=gate)


def _admit(gate: Gate) -> AdmissionDecision:
    return AdmissionDecision(admit=True, reason=AdmissionReason.ALLOWED, gate=gate)


def _decide_direct(facts: AdmissionFacts, policy: AdmissionPolicy) -> AdmissionDecision:
    mode = policy.dm_policy
    if mode == "disabled":
        return _deny(AdmissionReason.DM_DISABLED, Gate.DM_POLICY)
    if mode == "open":
        return _admit(Gate.DIRECT)
    listed = is_listed(facts.sender_id, policy.allowed_users)
    if mode == "allowlist":
        return (
            _admit(Gate.DIRECT)
            if listed
            else _deny(AdmissionReason.NOT_IN_ALLOWLIST, Gate.ALLOWLIST)
        )
    # "pairing", and any unrecognised value, fall back to the safe default.
    if listed or facts.paired:
        return _admit(Gate.DIRECT)
    return AdmissionDecision(
        admit=False,
        reason=AdmissionReason.PAIRING_REQUIRED,
        gate=Gate.PAIRING,
        issue_pairing_code=True,
    )


def _decide_group(facts: AdmissionFacts, policy: AdmissionPolicy) -> AdmissionDecision:
    if policy.allowed_chats and facts.chat_id not in policy.allowed_chats:
        return _deny(AdmissionReason.CHAT_NOT_ALLOWED, Gate.ALLOWLIST)
    if policy.allowed_users and not is_listed(facts.sender_id, policy.allowed_users):
        return _deny(AdmissionReason.NOT_IN_ALLOWLIST, Gate.ALLOWLIST)
    mode = policy.group_policy
    if mode == "respond_all":
        return _admit(Gate.GROUP_POLICY)
    if mode == "command_only":
        if facts.is_command:
            return _admit(Gate.GROUP_POLICY)
        return _deny(AdmissionReason.COMMAND_ONLY, Gate.GROUP_POLICY)
    if facts.is_mention or facts.is_command:
        return _admit(Gate.GROUP_POLICY)
    if mode == "observe":
        return AdmissionDecision(
            admit=False, reason=AdmissionReason.OBSERVE, gate=Gate.GROUP_POLICY, observe=True
        )
    # "mention_only", None and unrecognised values: mention-gated, never open.
    return _deny(AdmissionReason.GROUP_MENTION_ONLY, Gate.GROUP_POLICY)


def decide_admission(facts: AdmissionFacts, policy: AdmissionPolicy) -> AdmissionDecision:
    """Run the ladder; the first matching gate wins and the blocklist beats everything."""
    if is_listed(facts.sender_id, policy.blocked_users):
        return _deny(AdmissionReason.BLOCKED, Gate.BLOCKLIST)
    if facts.chat_kind == "direct":
        return _decide_direct(facts, policy)
    return _decide_group(facts, policy)
