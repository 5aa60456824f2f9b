"""Token-bucket rate limiting for inbound messages: per sender, per chat and global.

``take`` is the pure bucket arithmetic; ``RateLimiter`` keeps bounded in-memory bucket levels
and checks all three scopes atomically.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

from chatgate.model.frozen import record
from chatgate.model.reasons import DropReason

# How many of the least recently used buckets to inspect for a full one before evicting LRU.
_EVICTION_SCAN = 8


@dataclass(frozen=True)
class BucketSpec:
    """Bucket shape: refill rate (0 = never refills) and capacity (at least 1)."""

    rate_per_s: float
    burst: int

    def __post_init__(self) -> None:
        if not math.isfinite(self.rate_per_s) or self.rate_per_s < 0:
            raise ValueError(f"rate_per_s must be a finite number >= 0, got {self.rate_per_s!r}")
        if self.burst < 1:
            raise ValueError(f"burst must be >= 1, got {self.burst!r}")


@record  # two a limited scope per message: frozen by type (model/frozen.py)
class BucketState:
    """Tokens available as of ``updated_at``."""

    tokens: float
    updated_at: float


def _refill(spec: BucketSpec, state: BucketState | None, now: float) -> BucketState:
    if state is None:
        return BucketState(float(spec.burst), now)
    elapsed = max(0.0, now - state.updated_at)
    tokens = min(float(spec.burst), state.tokens + elapsed * spec.rate_per_s)
    # Never move updated_at backwards: time already credited must not be credited again.
    return BucketState(tokens, max(state.updated_at, now))


def take(
    spec: BucketSpec, state: BucketState | None, now: float, cost: float = 1.0
) -> tuple[bool, BucketState, float]:
    """Try to spend ``cost`` tokens at ``now``.

    Returns ``(allowed, new_state, retry_after_s)``. A ``None`` state is a full bucket.
    ``retry_after_s`` is 0 when allowed and ``math.inf`` when the bucket can never hold
    ``cost`` tokens (no refill, or cost above burst).
    """
    if not math.isfinite(cost) or cost < 0:
        raise ValueError(f"cost must be a finite number >= 0, got {cost!r}")
    current = _refill(spec, state, now)
    if current.tokens >= cost:
        return True, BucketState(current.tokens - cost, current.updated_at), 0.0
    if spec.rate_per_s == 0 or cost > spec.burst:
        return False, current, math.inf
    return False, current, (cost - current.tokens) / spec.rate_per_s


def _is_full(spec: BucketSpec, state: BucketState, now: float) -> bool:
    return _refill(spec, state, now).tokens >= spec.burst


@dataclass(frozen=True)
class RateLimitSpec:
    """Which scopes are limited; ``None`` disables a scope."""

    per_sender: BucketSpec | None = None
    per_chat: BucketSpec | None = None
    global_: BucketSpec | None = None


@record
class RateDecision:
    """Verdict of ``RateLimiter.check``; ``reason`` names the scope that refused."""

    allowed: bool
    reason: DropReason | None
    retry_after_s: float = 0.0


_ALLOWED = RateDecision(True, None)  # every admitted message: one shared (immutable) verdict


class _BucketMap:
    """Bucket levels per key, bounded by LRU eviction that prefers buckets already full."""

    def __init__(self, max_keys: int) -> None:
        self.max_keys = max_keys
        self.states: OrderedDict[str, BucketState] = OrderedDict()

    def get(self, key: str) -> BucketState | None:
        return self.states.get(key)

    def put(self, key: str, state: BucketState, spec: BucketSpec, now: float) -> None:
        if key in self.states:
            self.states.move_to_end(key)
        elif len(self.states) >= self.max_keys:
            self._evict_one(spec, now)
        self.states[key] = state

    def _evict_one(self, spec: BucketSpec, now: float) -> None:
        # A full bucket is indistinguishable from an absent one, so dropping it is free.
        for index, (key, state) in enumerate(self.states.items()):
            if index >= _EVICTION_SCAN:
                break
            if _is_full(spec, state, now):
                del self.states[key]
                return
        self.states.popitem(last=False)

    def settle(self, spec: BucketSpec, now: float) -> None:
        for key, state in list(self.states.items()):
            self.states[key] = _refill(spec, state, now)

    def clear(self) -> None:
        self.states.clear()


_GLOBAL_KEY = ""


class RateLimiter:
    """In-memory limiter over global, per-chat and per-sender buckets; no I/O, not thread-safe.

    Each scope keeps at most ``max_keys`` buckets. Under a flood of distinct keys the least
    recently used bucket is evicted, which hands that key a fresh burst: the global bucket is
    the backstop for that case.
    """

    def __init__(self, spec: RateLimitSpec, max_keys: int = 100_000) -> None:
        if max_keys < 1:
            raise ValueError(f"max_keys must be >= 1, got {max_keys!r}")
        self._spec = spec
        self._global = _BucketMap(1)
        self._chats = _BucketMap(max_keys)
        self._senders = _BucketMap(max_keys)

    @property
    def spec(self) -> RateLimitSpec:
        """The spec currently in force."""
        return self._spec

    def tracked_keys(self) -> int:
        """Number of buckets held in memory (for metrics and bounds checks)."""
        return len(self._global.states) + len(self._chats.states) + len(self._senders.states)

    def check(self, *, sender_key: str, chat_key: str, now: float) -> RateDecision:
        """Spend one token from every enabled scope, or from none if any scope refuses."""
        scopes = (
            (self._spec.global_, self._global, _GLOBAL_KEY, DropReason.RATE_LIMITED_GLOBAL),
            (self._spec.per_chat, self._chats, chat_key, DropReason.RATE_LIMITED_CHAT),
            (self._spec.per_sender, self._senders, sender_key, DropReason.RATE_LIMITED_SENDER),
        )
        staged: list[tuple[_BucketMap, str, BucketState, BucketSpec]] = []
        for spec, buckets, key, reason in scopes:
            if spec is None:
                continue
            allowed, new_state, retry_after = take(spec, buckets.get(key), now)
            if not allowed:
                return RateDecision(False, reason, retry_after)
            staged.append((buckets, key, new_state, spec))
        for buckets, key, new_state, spec in staged:
            buckets.put(key, new_state, spec, now)
        return _ALLOWED

    def update_spec(self, spec: RateLimitSpec, *, now: float | None = None) -> None:
        """Hot-reload limits; existing levels are kept (and clipped to a smaller burst).

        With ``now``, levels are first brought up to date under the old rates; without it, the
        time since each bucket's last use is credited at the new rate.
        """
        pairs = (
            (self._spec.global_, spec.global_, self._global),
            (self._spec.per_chat, spec.per_chat, self._chats),
            (self._spec.per_sender, spec.per_sender, self._senders),
        )
        for old, new, buckets in pairs:
            if new is None:
                buckets.clear()
            elif old is not None and now is not None:
                buckets.settle(old, now)
        self._spec = spec
