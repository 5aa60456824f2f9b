"""Lease timing: every interval derived from the TTL, takeover inside the TTL."""

from __future__ import annotations

import pytest

from chatgate.policies.lease_timing import LeaseTiming, poll_budget_s

# (ttl, validity, key ttl, renew every, probe every, fence)
TIMING_CASES = [
    (3.0, 2.0, 2.0, 2.0 / 3, 0.3, 2.0),
    (10.0, 20 / 3, 20 / 3, 20 / 9, 1.0, 20 / 3),
    (30.0, 20.0, 20.0, 20 / 3, 3.0, 20.0),
]


@pytest.mark.parametrize(("ttl", "valid", "key", "renew", "probe", "fence"), TIMING_CASES)
def test_intervals(
    ttl: float, valid: float, key: float, renew: float, probe: float, fence: float
) -> None:
    t = LeaseTiming(ttl)
    assert (t.validity_s, t.key_ttl_s, t.fence_s) == pytest.approx((valid, key, fence))
    assert (t.renew_every_s, t.probe_every_s) == pytest.approx((renew, probe))


@pytest.mark.parametrize("ttl", [0.5, 3.0, 10.0, 30.0, 600.0])
def test_takeover_within_the_ttl_and_the_key_never_outlives_the_holder(ttl: float) -> None:
    t = LeaseTiming(ttl)
    assert t.worst_takeover_s <= 0.77 * ttl
    assert t.key_ttl_s <= t.validity_s  # the key expires only once its holder stopped trusting it
    assert t.fence_s >= t.validity_s  # an unaware old holder is out before anyone may take over
    assert t.renew_every_s * 2 < t.validity_s  # one failed renewal never loses the lease


@pytest.mark.parametrize("ttl", [0.0, -1.0])
def test_ttl_must_be_positive(ttl: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        LeaseTiming(ttl)


# (lease left, configured, budget)
POLL_CASES = [
    ("no lease: as configured", None, 25.0, 25.0),
    ("plenty left: as configured", 60.0, 25.0, 25.0),
    ("margin is one second", 6.0, 25.0, 5.0),
    ("little left: margin is half", 1.2, 25.0, 0.6),
    ("nothing left: no poll", 0.0, 25.0, None),
]


@pytest.mark.parametrize(("case", "left", "configured", "budget"), POLL_CASES)
def test_poll_budget(
    case: str, left: float | None, configured: float, budget: float | None
) -> None:
    got = poll_budget_s(left, configured)
    assert got == (None if budget is None else pytest.approx(budget)), case
