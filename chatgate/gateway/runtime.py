"""The wired components of a running gateway, shared by the pipeline, turns and HTTP surface."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from chatgate.agents.base import Agent
from chatgate.config.loader import LoadedConfig
from chatgate.config.models import GatewayConfig
from chatgate.gateway.clock import Clock
from chatgate.gateway.delivery import ChannelLookup, Delivery
from chatgate.gateway.dlq import DeadLetters, DeadTargets
from chatgate.gateway.events import EventBus
from chatgate.gateway.journal import Journal
from chatgate.gateway.metrics import Metrics
from chatgate.gateway.pairing import PairingService
from chatgate.gateway.sessions import SessionCache
from chatgate.gateway.turnlock import TurnLock
from chatgate.policies.loopguard import BotLoopGuard
from chatgate.policies.ratelimit import RateLimiter


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
    channels: ChannelLookup
    rng: random.Random = field(default_factory=random.Random)
    draining: bool = False

    @property
    def config(self) -> GatewayConfig:
        return self.loaded.config

    @property
    def state_dir(self) -> Path:
        return self.loaded.state_dir
