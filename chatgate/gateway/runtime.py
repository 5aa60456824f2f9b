"""The wired components of a running gateway, shared by the pipeline, turns, status and the API.

Built once by `GatewayBuilder`; state is reached only through the protocols in `chatgate.state`.
`apply_config` asks each component to take a re-read config (hot reload).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatgate.agents.base import Agent
from chatgate.agents.tools.runtime import ToolRuntime
from chatgate.clock import Clock
from chatgate.config.loader import LoadedConfig
from chatgate.config.models import GatewayConfig
from chatgate.gateway.delivery.sender import Delivery
from chatgate.gateway.events import EventBus
from chatgate.gateway.metrics import Metrics
from chatgate.gateway.process.liveness import LoopWatchdog
from chatgate.gateway.session_cache import SessionCache
from chatgate.gateway.supervision.degraded import DegradedRegistry
from chatgate.gateway.turn_stats import TurnStats
from chatgate.policies.loopguard import BotLoopGuard, LoopPolicy
from chatgate.policies.ratelimit import BucketSpec, RateLimiter, RateLimitSpec
from chatgate.policies.send_errors import RetryPolicy
from chatgate.state.factory import State
from chatgate.state.protocols import (
    CallbackStore,
    DeadLetterStore,
    DeadTargetStore,
    Journal,
    PairingStore,
    TurnLock,
)

if TYPE_CHECKING:
    from chatgate.gateway.process.memory_monitor import MemoryMonitor, MemorySource
    from chatgate.gateway.supervision.directory import ChannelDirectory


@dataclass
class Runtime:
    loaded: LoadedConfig
    clock: Clock
    state: State
    cache: SessionCache
    agents: dict[str, Agent]
    delivery: Delivery
    events: EventBus
    metrics: Metrics
    limiter: RateLimiter
    loop_guard: BotLoopGuard
    owner: str
    channels: ChannelDirectory
    degraded: DegradedRegistry
    memory: MemoryMonitor
    memory_source: MemorySource
    watchdog: LoopWatchdog
    rng: random.Random = field(default_factory=random.Random)
    draining: bool = False
    turn_stats: TurnStats = field(default_factory=TurnStats)
    tools: ToolRuntime | None = None  # MCP servers and tool metrics

    @property
    def config(self) -> GatewayConfig:
        return self.loaded.config

    @property
    def state_dir(self) -> Path:
        return self.loaded.state_dir

    @property
    def journal(self) -> Journal:
        return self.state.journal

    @property
    def dead_letters(self) -> DeadLetterStore:
        return self.state.dead_letters

    @property
    def dead_targets(self) -> DeadTargetStore:
        return self.state.dead_targets

    @property
    def pairing(self) -> PairingStore:
        return self.state.pairing

    @property
    def callbacks(self) -> CallbackStore:
        return self.state.callbacks

    @property
    def turn_lock(self) -> TurnLock:
        return self.state.turn_lock

    def apply_config(self, new: LoadedConfig, agents: dict[str, Agent]) -> None:
        """Hand a validated, re-read config to every component that takes it live."""
        old = self.loaded.config.gateway
        gateway = new.config.gateway
        self.loaded = new
        self.agents = agents
        self.limiter.update_spec(rate_spec(new), now=self.clock.monotonic())
        if old.loop_guard != gateway.loop_guard:
            self.loop_guard = loop_guard(new)
        self.delivery.apply(retry_policy(new))
        self.memory_source.apply_limit_mb(gateway.memory.limit_mb)
        self.memory.update(
            shed_ratio=gateway.memory.shed_ratio,
            headroom_ratio=gateway.memory.headroom_ratio,
            interval_s=gateway.memory.interval_s,
        )


def _bucket(cfg: Any) -> BucketSpec | None:
    return BucketSpec(cfg.rate_per_s, cfg.burst) if cfg is not None else None


def rate_spec(loaded: LoadedConfig) -> RateLimitSpec:
    rl = loaded.config.gateway.rate_limits
    return RateLimitSpec(
        per_sender=_bucket(rl.per_sender),
        per_chat=_bucket(rl.per_chat),
        global_=_bucket(rl.global_),
    )


def retry_policy(loaded: LoadedConfig) -> RetryPolicy:
    d = loaded.config.gateway.delivery
    return RetryPolicy(d.max_attempts, d.base_delay_s, d.max_delay_s)


def loop_guard(loaded: LoadedConfig) -> BotLoopGuard:
    guard = loaded.config.gateway.loop_guard
    return BotLoopGuard(LoopPolicy(guard.max_bot_turns, guard.window_s))
