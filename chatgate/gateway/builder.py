"""GatewayBuilder: wire a Gateway from a loaded config (nothing is opened or started here).

In the manner of python-telegram-bot's ApplicationBuilder: set what differs from the defaults
(clock, channel registry, environment, memory source, a secrets listener), then `build()`.

    gateway = GatewayBuilder(loaded).registry(my_registry).build()
    await gateway.start()
"""

from __future__ import annotations

import logging
import os
import random
import socket
import uuid
from collections.abc import Callable, Mapping
from functools import partial

from chatgate.agents.mcp.hub import McpHub
from chatgate.agents.registry import build_agents
from chatgate.agents.tools.runtime import ToolRuntime
from chatgate.approvals.feature import Approvals
from chatgate.budgets.feature import Budgets
from chatgate.channels.registry import ChannelRegistry
from chatgate.clock import Clock, SystemClock
from chatgate.config.loader import LoadedConfig
from chatgate.config_edit.feature import ConfigEdit
from chatgate.feature.base import Feature
from chatgate.feature.voices import Voices
from chatgate.gateway.app import Gateway, GatewayParts
from chatgate.gateway.delivery.sender import Delivery
from chatgate.gateway.events import EventBus, EventName
from chatgate.gateway.features import ConfigPort, feature_context
from chatgate.gateway.http.app import DynamicRoutes
from chatgate.gateway.http.file_downloads import ReplyFiles
from chatgate.gateway.intake.pipeline import Pipeline
from chatgate.gateway.metrics import Metrics
from chatgate.gateway.process.liveness import LoopWatchdog
from chatgate.gateway.process.memory_monitor import (
    MemoryMonitor,
    MemorySource,
    MemoryStatus,
    ProcMemorySource,
)
from chatgate.gateway.process.sdnotify import Notifier
from chatgate.gateway.process.state_lock import StateLock
from chatgate.gateway.runtime import Runtime, loop_guard, rate_spec, retry_policy
from chatgate.gateway.session_cache import SessionCache
from chatgate.gateway.supervision.degraded import DegradedRegistry
from chatgate.gateway.supervision.directory import ChannelDirectory
from chatgate.gateway.supervision.lease import LeaseKeeper
from chatgate.media.links import FileLinks
from chatgate.media.outgoing import OutgoingFiles
from chatgate.model.messages import Target
from chatgate.model.outbound import OutboundMessage
from chatgate.people.feature import People
from chatgate.policies.ratelimit import RateLimiter
from chatgate.schedules.feature import Schedules
from chatgate.state.factory import build_state
from chatgate.takeover.feature import TakeoverFeature
from chatgate.telemetry.feature import Telemetry

log = logging.getLogger("chatgate.gateway")


class GatewayBuilder:
    def __init__(self, loaded: LoadedConfig) -> None:
        self._loaded = loaded
        self._clock: Clock = SystemClock()
        self._registry: ChannelRegistry | None = None
        self._env: Mapping[str, str] = os.environ
        self._memory_source: MemorySource | None = None
        self._on_secrets: Callable[[frozenset[str]], None] | None = None

    def clock(self, clock: Clock) -> GatewayBuilder:
        self._clock = clock
        return self

    def registry(self, registry: ChannelRegistry) -> GatewayBuilder:
        self._registry = registry
        return self

    def env(self, env: Mapping[str, str]) -> GatewayBuilder:
        self._env = env
        return self

    def memory_source(self, source: MemorySource) -> GatewayBuilder:
        self._memory_source = source
        return self

    def on_secrets(self, listener: Callable[[frozenset[str]], None]) -> GatewayBuilder:
        """Called with every secret after a reload (the log scrubber listens)."""
        self._on_secrets = listener
        return self

    def build(self) -> Gateway:
        """Every component, wired; a broken python agent raises ConfigError here, before any
        socket is bound or file written."""
        loaded, clock, env = self._loaded, self._clock, self._env
        gw = loaded.config.gateway
        registry = self._registry or ChannelRegistry()
        metrics = Metrics()
        tools = ToolRuntime(McpHub(loaded.config.mcp_servers, clock), metrics.registry)
        agents = build_agents(loaded.config, env, tools.hub)
        routes = DynamicRoutes()
        events = EventBus()
        degraded = DegradedRegistry()
        state = build_state(gw, loaded.state_dir, clock)
        watchdog = LoopWatchdog(interval_s=gw.watchdog.interval_s, max_lag_s=gw.watchdog.max_lag_s)
        memory_source = self._memory_source or ProcMemorySource(gw.memory.limit_mb)
        links = FileLinks(loaded.state_dir)
        files = OutgoingFiles(loaded.state_dir / "outgoing", links=links)
        channels = ChannelDirectory(
            registry,
            routes,
            metrics,
            loaded.state_dir,
            clock,
            degraded,
            gw.supervision,
            kv={
                "callbacks": state.callbacks,
                "facts": state.facts,
                "files": files,
                **state.stores.kv,
            },
            # Lease TTLs run on the shared store's real clock, never on an injected one.
            leases=LeaseKeeper(state.leases, gw.redis.lease_ttl_s, SystemClock()),
        )
        delivery = Delivery(
            channels,
            state.dead_letters,
            state.dead_targets,
            retry_policy(loaded),
            clock,
            events,
            metrics,
            callback_store=state.callbacks,
            files=files,
        )
        tools.hub.sender = partial(send_text, delivery)
        cache = SessionCache(
            state.sessions, max_warm=gw.sessions.warm_max, max_messages=gw.sessions.max_messages
        )
        memory = MemoryMonitor(
            memory_source,
            cache,
            clock,
            shed_ratio=gw.memory.shed_ratio,
            headroom_ratio=gw.memory.headroom_ratio,
            interval_s=gw.memory.interval_s,
            on_evict=lambda key: _evicted(metrics, key),
            on_sample=lambda status: _sampled(metrics, status, watchdog, len(cache)),
        )
        rt = Runtime(
            loaded=loaded,
            clock=clock,
            state=state,
            cache=cache,
            agents=agents,
            delivery=delivery,
            events=events,
            metrics=metrics,
            limiter=RateLimiter(rate_spec(loaded)),
            loop_guard=loop_guard(loaded),
            owner=f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}",
            channels=channels,
            degraded=degraded,
            memory=memory,
            memory_source=memory_source,
            watchdog=watchdog,
            rng=random.Random(),
            tools=tools,
        )
        events.subscribe(rt.turn_stats.on_event, EventName.TURN_FINISHED)
        voices = Voices(rt)
        channels.kv["voices"] = voices  # channel-level texts (menu words) in its language
        delivery.voices = voices
        pipeline = Pipeline(rt)
        config_port = ConfigPort(registry, env)
        context = feature_context(rt, pipeline, config_port)
        others: tuple[Feature, ...] = (
            Telemetry(context, env),
            ReplyFiles(files, links, state.dead_letters, clock),
            Approvals(context),
            Schedules(context),
            TakeoverFeature(context),
            ConfigEdit(context),
            Budgets(context),
        )
        features = (*others, People(context, lambda: others))
        pipeline.plug(features)
        for feature in features:
            feature.mount(routes)
        parts = GatewayParts(
            rt=rt,
            pipeline=pipeline,
            features=features,
            registry=registry,
            routes=routes,
            env=env,
            notifier=Notifier(env),
            state_lock=StateLock(loaded.state_dir),
            on_secrets=self._on_secrets,
        )
        gateway = Gateway(parts)
        config_port.bind(gateway.reload)
        return gateway


def _evicted(metrics: Metrics, key: str) -> None:
    metrics.evictions.inc()
    log.info("evicted a warm session under memory pressure", extra={"session": key})


def _sampled(metrics: Metrics, status: MemoryStatus, watchdog: LoopWatchdog, warm: int) -> None:
    metrics.memory_rss.set(status.rss_bytes)
    metrics.memory_limit.set(status.limit_bytes or 0)
    metrics.loop_lag.set(watchdog.lag_s)
    metrics.warm_sessions.set(warm)


async def send_text(delivery: Delivery, address: str, text: str) -> str:
    """The gateway.send_message tool's way out: the normal delivery path (retries, DLQ)."""
    report = await delivery.deliver(Target.parse(address), OutboundMessage.from_text(text))
    return report.status.value
