"""The channel state machine: every (state, event) pair, table-driven."""

from __future__ import annotations

import pytest

from chatgate.policies.channel_states import TRANSITIONS, ChannelEvent, ChannelState, next_state

S, E = ChannelState, ChannelEvent

# Where each event may take a channel from each state; a state not listed stays illegal (None).
EXPECTED: dict[ChannelEvent, dict[ChannelState, ChannelState]] = {
    E.ATTEMPT: {
        S.STOPPED: S.STARTING,  # first start
        S.BACKOFF: S.STARTING,  # backoff elapsed
        S.STANDBY: S.STARTING,  # this replica won the lease
        S.RESTARTING: S.STARTING,  # operator restart (of a running, waiting or parked channel)
        S.LEASE_LOST: S.STARTING,  # a lost lease won back at once
    },
    E.STARTED: {S.STARTING: S.RUNNING},
    E.FAILED: {
        S.STARTING: S.BACKOFF,
        S.RUNNING: S.BACKOFF,
        S.BACKOFF: S.BACKOFF,
        S.RESTARTING: S.BACKOFF,  # restarted during a fleet breaker hold: held again
    },
    E.FATAL: {S.STARTING: S.PARKED, S.RUNNING: S.PARKED},
    E.BUDGET_SPENT: {S.BACKOFF: S.PARKED, S.RESTARTING: S.PARKED},
    E.UNCONFIGURED: {S.STARTING: S.NOT_CONFIGURED, S.RUNNING: S.NOT_CONFIGURED},
    E.LEASE_ELSEWHERE: {
        state: S.STANDBY for state in S if state is not S.DISABLED
    },  # a lost lease, or one never held
    E.STOPPED: {
        S.STARTING: S.STOPPED,
        S.RUNNING: S.STOPPED,
        S.BACKOFF: S.STOPPED,
        S.RESTARTING: S.STOPPED,
        S.LEASE_LOST: S.STOPPED,
    },
    E.RESTART: {  # not from standby (another replica runs it) nor while a run already ends
        S.STARTING: S.RESTARTING,
        S.RUNNING: S.RESTARTING,
        S.BACKOFF: S.RESTARTING,
        S.PARKED: S.RESTARTING,
        S.NOT_CONFIGURED: S.RESTARTING,
    },
    E.LEASE_LOST: {S.STARTING: S.LEASE_LOST, S.RUNNING: S.LEASE_LOST, S.RESTARTING: S.LEASE_LOST},
}


@pytest.mark.parametrize(("state", "event"), [(s, e) for s in S for e in E])
def test_every_pair(state: ChannelState, event: ChannelEvent) -> None:
    assert next_state(state, event) is EXPECTED[event].get(state)


def test_every_event_has_a_row() -> None:
    assert set(TRANSITIONS) == set(E) == set(EXPECTED)


def test_disabled_is_never_left_or_entered() -> None:
    assert all(next_state(S.DISABLED, e) is None for e in E)
    assert all(t.to is not S.DISABLED for t in TRANSITIONS.values())
