"""A supervised channel's states and the one table of which event moves it from which state to
which. The restart ladder and the channel directory change a channel's state only through it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class ChannelState(StrEnum):
    DISABLED = "disabled"
    NOT_CONFIGURED = "not_configured"
    STARTING = "starting"
    RUNNING = "running"
    BACKOFF = "backoff"
    STANDBY = "standby"  # another replica holds this channel's exclusive connection
    PARKED = "parked"
    STOPPED = "stopped"
    RESTARTING = "restarting"  # an operator restart: the run ends (if any) and the next begins
    LEASE_LOST = "lease_lost"  # the exclusive connection's lease lapsed: stop, then wait for it


class ChannelEvent(StrEnum):
    """What happened to a channel (each names who raises it)."""

    ATTEMPT = "attempt"  # ladder: a run starts (first start, after backoff, restart, lease won)
    STARTED = "started"  # ladder: the adapter's start returned
    FAILED = "failed"  # ladder: a transient exit; restarts after backoff (or a breaker hold)
    FATAL = "fatal"  # ladder: revoked token, conflict, bad config; no restart
    BUDGET_SPENT = "budget_spent"  # ladder: too many restarts within the hour
    UNCONFIGURED = "unconfigured"  # ladder: the adapter lacks what it needs to start
    LEASE_ELSEWHERE = "lease_elsewhere"  # lease keeper: another replica holds the connection
    STOPPED = "stopped"  # directory: the gateway stops
    RESTART = "restart"  # directory: the operator restarts (or un-parks) the channel
    LEASE_LOST = "lease_lost"  # lease keeper: this replica's lease lapsed during a run


@dataclass(frozen=True, slots=True)
class Transition:
    to: ChannelState
    sources: frozenset[ChannelState]


_S = ChannelState
_LIVE = frozenset({_S.STARTING, _S.RUNNING})
_ENDING = frozenset({_S.RESTARTING, _S.LEASE_LOST})  # a run ends to start again
_WAITING = frozenset({_S.STOPPED, _S.BACKOFF, _S.STANDBY, _S.PARKED, _S.NOT_CONFIGURED})

TRANSITIONS: Mapping[ChannelEvent, Transition] = {
    ChannelEvent.ATTEMPT: Transition(_S.STARTING, _ENDING | {_S.STOPPED, _S.BACKOFF, _S.STANDBY}),
    ChannelEvent.STARTED: Transition(_S.RUNNING, frozenset({_S.STARTING})),
    # From BACKOFF too: each retry (and a breaker hold) re-marks it with the next retry time;
    # from RESTARTING: a restart during a breaker hold holds again.
    ChannelEvent.FAILED: Transition(_S.BACKOFF, _LIVE | {_S.BACKOFF, _S.RESTARTING}),
    ChannelEvent.FATAL: Transition(_S.PARKED, _LIVE),
    ChannelEvent.BUDGET_SPENT: Transition(_S.PARKED, frozenset({_S.BACKOFF, _S.RESTARTING})),
    ChannelEvent.UNCONFIGURED: Transition(_S.NOT_CONFIGURED, _LIVE),
    ChannelEvent.LEASE_ELSEWHERE: Transition(_S.STANDBY, _WAITING | _LIVE | _ENDING),
    ChannelEvent.STOPPED: Transition(_S.STOPPED, _LIVE | _ENDING | {_S.BACKOFF}),
    ChannelEvent.RESTART: Transition(
        _S.RESTARTING, _LIVE | {_S.BACKOFF, _S.PARKED, _S.NOT_CONFIGURED}
    ),
    ChannelEvent.LEASE_LOST: Transition(_S.LEASE_LOST, _LIVE | {_S.RESTARTING}),
}


def next_state(state: ChannelState, event: ChannelEvent) -> ChannelState | None:
    """Where ``event`` moves a channel in ``state``; None when it does not apply there."""
    move = TRANSITIONS[event]
    return move.to if state in move.sources else None
