"""When a channel lease is renewed, probed for and trusted: one TTL, every interval derived.

``lease_ttl_s`` (T) is the operator's promise: a standby takes over within T after the holder
dies. The holder trusts its lease for the validity V = 2/3 T after a grant was asked for; the
Redis key lives exactly V (PX), so the key can only expire after the holder stopped trusting it.
The holder renews every V/3 (two renewals may fail before it lets go); a standby probes every
T/10, so takeover happens at most V + T/10 ≈ 0.77 T after the holder's last renewal. After Redis
lost its data, nobody may take a free lease for V (the fence): an old holder that has not noticed
yet is still inside its validity at most that long.
"""

from __future__ import annotations

from dataclasses import dataclass

VALID_FRACTION = 2 / 3  # of the TTL: how long a grant is trusted (and the key's PX)
RENEWALS_PER_VALIDITY = 3
PROBES_PER_TTL = 10
POLL_MARGIN_MAX_S = 1.0  # a long poll ends this long (or half the time left) before the lease


@dataclass(frozen=True)
class LeaseTiming:
    """Every interval of one lease, derived from its TTL."""

    ttl_s: float

    def __post_init__(self) -> None:
        if not self.ttl_s > 0:
            raise ValueError("lease ttl must be positive")

    @property
    def validity_s(self) -> float:
        """How long after asking for a grant the holder may act on it."""
        return self.ttl_s * VALID_FRACTION

    @property
    def key_ttl_s(self) -> float:
        """The lease key's expiry: the validity, so it never outlives what its holder trusts."""
        return self.validity_s

    @property
    def renew_every_s(self) -> float:
        return self.validity_s / RENEWALS_PER_VALIDITY

    @property
    def probe_every_s(self) -> float:
        """How often a standby asks for the lease."""
        return self.ttl_s / PROBES_PER_TTL

    @property
    def fence_s(self) -> float:
        """After Redis lost its data, how long a free lease stays untakeable."""
        return self.validity_s

    @property
    def worst_takeover_s(self) -> float:
        """The longest time from the holder's last renewal to a standby holding the lease."""
        return self.key_ttl_s + self.probe_every_s


def poll_budget_s(lease_left_s: float | None, configured_s: float) -> float | None:
    """How long one long poll may wait so it ends while the lease still holds: the time left less
    a margin of min(1 s, half the time left); None when no lease is left to poll under."""
    if lease_left_s is None:
        return configured_s
    if lease_left_s <= 0:
        return None
    return min(configured_s, lease_left_s - min(POLL_MARGIN_MAX_S, lease_left_s / 2))
