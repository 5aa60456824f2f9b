"""The Gateway: wires config, state, agents, channels and the HTTP server, and owns the lifecycle.

start(): open state → resume unfinished journal entries → serve HTTP → start channels → ready.
stop(): not ready → channels stop intake → in-flight turns finish within drain_timeout_s (the rest
stay pending in the journal for the next start) → channels stop → state closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import uuid
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from chatgate import __version__
from chatgate.agents.registry import build_agents
from chatgate.channels.registry import ChannelRegistry
from chatgate.channels.types import Target
from chatgate.config.base import secret_value
from chatgate.config.loader import LoadedConfig
from chatgate.gateway import commands as cmd
from chatgate.gateway.channel_manager import ChannelManager
from chatgate.gateway.clock import Clock, SystemClock
from chatgate.gateway.db import Database
from chatgate.gateway.delivery import Delivery
from chatgate.gateway.dlq import DeadLetters, DeadTargets
from chatgate.gateway.events import EventBus
from chatgate.gateway.http_app import DynamicRoutes, build_app
from chatgate.gateway.journal import Journal
from chatgate.gateway.metrics import Metrics
from chatgate.gateway.pairing import PairingService
from chatgate.gateway.pipeline import Pipeline
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.sessions import SessionCache
from chatgate.gateway.store import SqliteSessionStore
from chatgate.gateway.turnlock import LocalTurnLock
from chatgate.policies.loopguard import BotLoopGuard, LoopPolicy
from chatgate.policies.ratelimit import BucketSpec, RateLimiter, RateLimitSpec
from chatgate.policies.send_errors import RetryPolicy
from chatgate.presentation.model import OutboundMessage, message_from_dict

log = logging.getLogger("chatgate.gateway")
DB_FILE = "chatgate.db"
PAIRING_POLL_S = 2.0
PURGE_EVERY_S = 3600.0


def _bucket(cfg: Any) -> BucketSpec | None:
    return BucketSpec(cfg.rate_per_s, cfg.burst) if cfg is not None else None


def rate_spec(loaded: LoadedConfig) -> RateLimitSpec:
    rl = loaded.config.gateway.rate_limits
    return RateLimitSpec(
        per_sender=_bucket(rl.per_sender),
        per_chat=_bucket(rl.per_chat),
        global_=_bucket(rl.global_),
    )


class Gateway:
    def __init__(
        self,
        loaded: LoadedConfig,
        *,
        clock: Clock | None = None,
        registry: ChannelRegistry | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.loaded = loaded
        self.clock = clock or SystemClock()
        self.registry = registry or ChannelRegistry()
        self.env = os.environ if env is None else env
        self.metrics = Metrics()
        self.routes = DynamicRoutes()
        self.events = EventBus()
        self.db = Database(
            loaded.state_dir / DB_FILE, synchronous=loaded.config.gateway.store.synchronous
        )
        self.started_at = 0.0
        self.ready = False
        self.draining = False
        self.port: int | None = None
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stopped = asyncio.Event()
        self.rt: Runtime
        self.pipeline: Pipeline
        self.channels: ChannelManager

    @property
    def api_token(self) -> str | None:
        return secret_value(self.loaded.config.gateway.api_token)

    async def start(self) -> None:
        cfg = self.loaded.config
        self.started_at = self.clock.time()
        self.loaded.state_dir.mkdir(parents=True, exist_ok=True)
        await self.db.open()
        journal = Journal(self.db)
        store = SqliteSessionStore(self.db)
        dlq, dead = DeadLetters(self.db), DeadTargets(self.db)
        pairing = PairingService(self.db)
        await asyncio.gather(dlq.load(), dead.load(), pairing.load())
        self.metrics.dlq_size.set(dlq.size)
        self.events.load_plugins()
        self.channels = ChannelManager(
            self.registry, self.routes, self.metrics, self.loaded.state_dir, self.clock
        )
        delivery = Delivery(
            self.channels,
            dlq,
            dead,
            RetryPolicy(
                cfg.gateway.delivery.max_attempts,
                cfg.gateway.delivery.base_delay_s,
                cfg.gateway.delivery.max_delay_s,
            ),
            self.clock,
            self.events,
            self.metrics,
        )
        sessions = cfg.gateway.sessions
        self.rt = Runtime(
            loaded=self.loaded,
            clock=self.clock,
            journal=journal,
            cache=SessionCache(
                store, max_warm=sessions.warm_max, max_messages=sessions.max_messages
            ),
            agents=build_agents(cfg, self.env),
            delivery=delivery,
            dlq=dlq,
            dead=dead,
            pairing=pairing,
            events=self.events,
            metrics=self.metrics,
            limiter=RateLimiter(rate_spec(self.loaded)),
            loop_guard=BotLoopGuard(
                LoopPolicy(cfg.gateway.loop_guard.max_bot_turns, cfg.gateway.loop_guard.window_s)
            ),
            lock=LocalTurnLock(),
            owner=f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}",
            channels=self.channels,
            rng=random.Random(),
        )
        self.pipeline = Pipeline(self.rt)
        sections = {n: getattr(cfg.channels, n) for n in type(cfg.channels).model_fields}
        sections.update(self.loaded.plugin_channels)
        self.channels.build(sections)
        await self.pipeline.recover()
        await self._serve_http()
        await self.channels.start_all(self.pipeline)
        self.ready = True
        self._tasks = [
            asyncio.create_task(self._pairing_notifier(), name="pairing-notifier"),
            asyncio.create_task(self._purge_journal(), name="journal-purge"),
            asyncio.create_task(self._prewarm(), name="prewarm"),
        ]
        log.info(
            "chatgate ready",
            extra={
                "version": __version__,
                "port": self.port,
                "channels": ",".join(self.channels.adapters) or "-",
            },
        )

    async def _serve_http(self) -> None:
        http = self.loaded.config.gateway.http
        self._runner = web.AppRunner(
            build_app(self, self.routes), access_log=None, handle_signals=False
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, http.host, http.port, reuse_address=True)
        await site.start()
        server = site._server  # aiohttp exposes no public accessor for the bound port
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else http.port

    async def stop(self) -> None:
        """Graceful shutdown; safe to call twice."""
        if self._stopped.is_set():
            return
        self.draining = True
        self.ready = False
        self.rt.draining = True
        log.info("draining", extra={"timeout_s": self.loaded.config.gateway.drain_timeout_s})
        await self.channels.stop_intake()
        try:
            await asyncio.wait_for(
                self.pipeline.drain(), self.loaded.config.gateway.drain_timeout_s
            )
        except TimeoutError:
            cancelled = self.pipeline.scheduler.cancel_all()
            log.warning(
                "drain timeout; unfinished turns stay journaled for the next start",
                extra={"cancelled": cancelled},
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.pipeline.drain(), 5.0)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.channels.stop_all()
        await self.events.drain()
        if self._runner is not None:
            await self._runner.cleanup()
        for agent in self.rt.agents.values():
            with contextlib.suppress(Exception):
                await agent.aclose()
        await self.db.close()
        self._stopped.set()
        log.info("stopped")

    # -- health, readiness, status ---------------------------------------------------------

    def health(self) -> tuple[bool, dict[str, Any]]:
        return True, {"status": "ok"}

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        if self.draining:
            return False, {"status": "draining"}
        if not self.ready:
            return False, {"status": "starting"}
        return True, {"status": "ready"}

    async def status(self) -> dict[str, Any]:
        from chatgate.gateway.status import build_status

        return await build_status(self)

    async def replay_dead_letter(self, entry_id: int) -> dict[str, Any]:
        entry = await self.rt.dlq.take(entry_id)
        if entry is None:
            return {"found": False, "id": entry_id}
        data = dict(entry.message)
        first = int(data.pop("first_chunk", 0) or 0)
        await self.rt.dead.revive(entry.target.address)
        report = await self.rt.delivery.deliver(
            entry.target,
            message_from_dict(data),
            inbound_key=entry.inbound_key,
            session=entry.session,
            first_chunk=first,
        )
        self.metrics.dlq_size.set(self.rt.dlq.size)
        return {
            "found": True,
            "id": entry_id,
            "status": report.status.value,
            "kind": report.kind.value if report.kind else None,
        }

    # -- background loops --------------------------------------------------------------------

    async def _pairing_notifier(self) -> None:
        while True:
            await self.clock.sleep(PAIRING_POLL_S)
            try:
                for approved in await self.rt.pairing.take_unnotified():
                    section = getattr(self.loaded.config.channels, approved.channel, None)
                    if approved.chat_id and getattr(section, "pairing_notify", True):
                        await self.rt.delivery.deliver(
                            Target(approved.channel, approved.chat_id),
                            OutboundMessage.from_text(cmd.APPROVED_TEXT),
                        )
            except Exception:
                log.exception("pairing notifier failed")

    async def _purge_journal(self) -> None:
        while True:
            try:
                window = self.loaded.config.gateway.dedupe_window_s
                removed = await self.rt.journal.purge(self.clock.time() - window)
                if removed:
                    log.info("journal purged", extra={"rows": removed})
            except Exception:
                log.exception("journal purge failed")
            await self.clock.sleep(PURGE_EVERY_S)

    async def _prewarm(self) -> None:
        for name, agent in self.rt.agents.items():
            prewarm = getattr(agent, "prewarm", None)
            if prewarm is not None and getattr(self.loaded.config.agents[name], "prewarm", False):
                try:
                    await prewarm()
                except Exception:
                    log.exception("agent prewarm failed", extra={"agent": name})
