"""Admission ladder: table of every gate plus properties over random facts and policies."""

from __future__ import annotations

from dataclasses import replace
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.model.messages import ChatKind
from chatgate.model.reasons import AdmissionReason as R
from chatgate.model.reasons import Gate as G
from chatgate.policies.admission import (
    AdmissionDecision,
    AdmissionFacts,
    AdmissionPolicy,
    DmPolicy,
    GroupPolicy,
    decide_admission,
    normalize_chat_kind,
)


@pytest.mark.parametrize(
    ("native", "kind"),
    [
        ("private", "direct"),
        ("dm", "direct"),
        ("im", "direct"),
        ("direct", "direct"),
        ("webhook", "direct"),
        (" Private ", "direct"),
        ("channel", "channel"),
        ("CHANNEL", "channel"),
        ("group", "group"),
        ("supergroup", "group"),
        ("mpim", "group"),
        ("guild_text", "group"),
        ("", "group"),
    ],
)
def test_normalize_chat_kind(native: str, kind: str) -> None:
    assert normalize_chat_kind(native) == kind


def _dm(sender: str = "u1", *, paired: bool = False) -> AdmissionFacts:
    return AdmissionFacts(chat_kind="direct", sender_id=sender, chat_id="c-dm", paired=paired)


def _grp(
    sender: str = "u1",
    chat: str = "g1",
    *,
    mention: bool = False,
    command: bool = False,
    kind: ChatKind = "group",
) -> AdmissionFacts:
    return AdmissionFacts(
        chat_kind=kind, sender_id=sender, chat_id=chat, is_mention=mention, is_command=command
    )


def _p(**kwargs: object) -> AdmissionPolicy:
    return AdmissionPolicy(**kwargs)  # type: ignore[arg-type]


U1 = frozenset({"u1"})
U2 = frozenset({"u2"})

# (case id, facts, policy, admit, reason, gate, observe, issue_pairing_code)
CASES = [
    ("blocked-dm", _dm(), _p(blocked_users=U1, dm_policy="open"), False, R.BLOCKED, G.BLOCKLIST),
    ("blocked-beats-allow", _dm(), _p(blocked_users=U1, allowed_users=U1), False, R.BLOCKED,
     G.BLOCKLIST),
    ("blocked-group", _grp(mention=True), _p(blocked_users=U1, group_policy="respond_all"), False,
     R.BLOCKED, G.BLOCKLIST),
    ("blocked-paired", _dm(paired=True), _p(blocked_users=U1), False, R.BLOCKED, G.BLOCKLIST),
    ("dm-disabled", _dm(), _p(dm_policy="disabled", allowed_users=U1), False, R.DM_DISABLED,
     G.DM_POLICY),
    ("dm-open", _dm(), _p(dm_policy="open"), True, R.ALLOWED, G.DIRECT),
    ("dm-open-ignores-allowlist", _dm(), _p(dm_policy="open", allowed_users=U2), True, R.ALLOWED,
     G.DIRECT),
    ("dm-allowlist-in", _dm(), _p(dm_policy="allowlist", allowed_users=U1), True, R.ALLOWED,
     G.DIRECT),
    ("dm-allowlist-out", _dm(), _p(dm_policy="allowlist", allowed_users=U2), False,
     R.NOT_IN_ALLOWLIST, G.ALLOWLIST),
    ("dm-allowlist-empty-denies", _dm(), _p(dm_policy="allowlist"), False, R.NOT_IN_ALLOWLIST,
     G.ALLOWLIST),
    ("dm-allowlist-paired-not-enough", _dm(paired=True), _p(dm_policy="allowlist"), False,
     R.NOT_IN_ALLOWLIST, G.ALLOWLIST),
    ("dm-pairing-listed", _dm(), _p(allowed_users=U1), True, R.ALLOWED, G.DIRECT),
    ("dm-pairing-paired", _dm(paired=True), _p(), True, R.ALLOWED, G.DIRECT),
    ("dm-ignores-group-policy", _dm(paired=True), _p(group_policy="command_only"), True,
     R.ALLOWED, G.DIRECT),
    ("dm-ignores-allowed-chats", _dm(paired=True), _p(allowed_chats=frozenset({"zz"})), True,
     R.ALLOWED, G.DIRECT),
    ("chat-not-allowed", _grp(mention=True), _p(allowed_chats=frozenset({"g2"})), False,
     R.CHAT_NOT_ALLOWED, G.ALLOWLIST),
    ("chat-allowed", _grp(mention=True), _p(allowed_chats=frozenset({"g1"})), True, R.ALLOWED,
     G.GROUP_POLICY),
    ("chat-check-before-user", _grp(), _p(allowed_chats=frozenset({"g2"}), allowed_users=U2),
     False, R.CHAT_NOT_ALLOWED, G.ALLOWLIST),
    ("group-user-not-listed", _grp(mention=True), _p(allowed_users=U2), False,
     R.NOT_IN_ALLOWLIST, G.ALLOWLIST),
    ("channel-kind-uses-group-path", _grp(mention=True, kind="channel"), _p(allowed_users=U2),
     False, R.NOT_IN_ALLOWLIST, G.ALLOWLIST),
    ("respond-all", _grp(), _p(group_policy="respond_all"), True, R.ALLOWED, G.GROUP_POLICY),
    ("command-only-command", _grp(command=True), _p(group_policy="command_only"), True,
     R.ALLOWED, G.GROUP_POLICY),
    ("command-only-mention", _grp(mention=True), _p(group_policy="command_only"), False,
     R.COMMAND_ONLY, G.GROUP_POLICY),
    ("mention-only-mention", _grp(mention=True), _p(group_policy="mention_only"), True,
     R.ALLOWED, G.GROUP_POLICY),
    ("mention-only-command", _grp(command=True), _p(group_policy="mention_only"), True,
     R.ALLOWED, G.GROUP_POLICY),
    ("mention-only-chatter", _grp(), _p(group_policy="mention_only"), False,
     R.GROUP_MENTION_ONLY, G.GROUP_POLICY),
    ("unset-is-mention-only", _grp(), _p(), False, R.GROUP_MENTION_ONLY, G.GROUP_POLICY),
    ("unset-admits-mention", _grp(mention=True), _p(), True, R.ALLOWED, G.GROUP_POLICY),
    ("observe-mention", _grp(mention=True), _p(group_policy="observe"), True, R.ALLOWED,
     G.GROUP_POLICY),
    ("observe-command", _grp(command=True), _p(group_policy="observe"), True, R.ALLOWED,
     G.GROUP_POLICY),
]  # fmt: skip


@pytest.mark.parametrize(
    ("facts", "policy", "admit", "reason", "gate"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_ladder(
    facts: AdmissionFacts, policy: AdmissionPolicy, admit: bool, reason: R, gate: G
) -> None:
    decision = decide_admission(facts, policy)
    assert decision == AdmissionDecision(admit=admit, reason=reason, gate=gate)


def test_observe_records_without_turn() -> None:
    decision = decide_admission(_grp(), _p(group_policy="observe"))
    assert decision == AdmissionDecision(
        admit=False, reason=R.OBSERVE, gate=G.GROUP_POLICY, observe=True
    )


@pytest.mark.parametrize("dm_policy", ["pairing", "bogus"])
def test_unpaired_dm_asks_for_pairing(dm_policy: str) -> None:
    decision = decide_admission(_dm(), _p(dm_policy=dm_policy, allowed_users=U2))
    assert decision == AdmissionDecision(
        admit=False, reason=R.PAIRING_REQUIRED, gate=G.PAIRING, issue_pairing_code=True
    )


def test_pairing_never_applies_in_groups() -> None:
    decision = decide_admission(_grp(), _p(dm_policy="pairing", group_policy="respond_all"))
    assert decision.admit
    assert not decision.issue_pairing_code


def test_unknown_group_policy_is_mention_only() -> None:
    assert decide_admission(_grp(), _p(group_policy="loud")).reason == R.GROUP_MENTION_ONLY


ids = st.sampled_from(["u1", "u2", "u3", "g1", "g2"])
id_sets = st.frozensets(ids, max_size=3)
facts_st = st.builds(
    AdmissionFacts,
    chat_kind=st.sampled_from(get_args(ChatKind)),
    sender_id=ids,
    chat_id=ids,
    is_mention=st.booleans(),
    is_command=st.booleans(),
    paired=st.booleans(),
)
group_policies: st.SearchStrategy[GroupPolicy | None] = st.sampled_from(
    [None, *get_args(GroupPolicy)]
)
policy_st = st.builds(
    AdmissionPolicy,
    dm_policy=st.sampled_from(get_args(DmPolicy)),
    group_policy=group_policies,
    allowed_users=id_sets,
    blocked_users=id_sets,
    allowed_chats=id_sets,
)


@settings(max_examples=50)
@given(facts_st, policy_st)
def test_blocked_sender_is_never_admitted(facts: AdmissionFacts, policy: AdmissionPolicy) -> None:
    blocked = replace(policy, blocked_users=policy.blocked_users | {facts.sender_id})
    decision = decide_admission(facts, blocked)
    assert not decision.admit
    assert not decision.observe
    assert not decision.issue_pairing_code
    assert decision.reason == R.BLOCKED


@settings(max_examples=50)
@given(facts_st, policy_st, group_policies, id_sets)
def test_dms_never_consult_group_settings(
    facts: AdmissionFacts,
    policy: AdmissionPolicy,
    other_group_policy: GroupPolicy | None,
    other_chats: frozenset[str],
) -> None:
    dm = replace(facts, chat_kind="direct")
    changed = replace(policy, group_policy=other_group_policy, allowed_chats=other_chats)
    decision = decide_admission(dm, policy)
    assert decision == decide_admission(dm, changed)
    assert decision.gate != G.GROUP_POLICY
    assert not decision.observe


@settings(max_examples=50)
@given(facts_st, policy_st)
def test_unset_group_policy_equals_mention_only(
    facts: AdmissionFacts, policy: AdmissionPolicy
) -> None:
    unset = decide_admission(facts, replace(policy, group_policy=None))
    assert unset == decide_admission(facts, replace(policy, group_policy="mention_only"))


@settings(max_examples=50)
@given(facts_st, policy_st)
def test_admitted_group_messages_pass_every_group_allowlist(
    facts: AdmissionFacts, policy: AdmissionPolicy
) -> None:
    decision = decide_admission(facts, policy)
    if decision.admit and facts.chat_kind != "direct":
        assert not policy.allowed_chats or facts.chat_id in policy.allowed_chats
        assert not policy.allowed_users or facts.sender_id in policy.allowed_users
        assert not decision.issue_pairing_code
