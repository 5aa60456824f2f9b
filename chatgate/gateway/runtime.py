"""The wired components of a running gateway, shared by the pipeline, turns and HTTP surface."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatgate.agents.base import Agent
from chatgate.config.loader import LoadedConfig
from chatgate.config.models import GatewayConfig
from chatgate.gateway.clock import Clock
from chatgate.gateway.degraded import DegradedRegistry
from chatgate.gateway.delivery import Delivery
from chatgate.gateway.dlq import DeadLetters, DeadTargets
from chatgate.gateway.events import EventBus
from chatgate.gateway.journal import Journal
from chatgate.gateway.metrics import Metrics
from chatgate.gateway.pairing import PairingService
from chatgate.gateway.sessions import SessionCache
from chatgate.gateway.turnlock import TurnLock
from chatgate.policies.loopguard import BotLoopGuard
from chatgate.policies.ratelimit import BucketSpec, RateLimiter, RateLimitSpec
from chatgate.policies.send_errors import RetryPolicy

if TYPE_CHECKING:
    from chatgate.gateway.memory_monitor import MemoryMonitor
    from chatgate.gateway.supervisor import ChannelSupervisor


@dataclass
class Runtime:
    loaded: LoadedConfig
    clock: Clock
    journal: Journal
    cache: SessionCache
    agents: dict[str, Agent]
    delivery: Delivery
    dlq: DeadLetters
    dead: DeadTargets
    pairing: PairingService
    events: EventBus
    metrics: Metrics
    limiter: RateLimiter
    loop_guard: BotLoopGuard
    lock: TurnLock
    owner: str
    channels: ChannelSupervisor
    degraded: DegradedRegistry
    memory: MemoryMonitor
    rng: random.Random = field(default_factory=random.Random)
    draining: bool = False

    @property
    def config(self) -> GatewayConfig:
        return self.loaded.config

    @property
    def state_dir(self) -> Path:
        return self.loaded.state_dir


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
