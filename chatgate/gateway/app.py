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
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from aiohttp import web

from chatgate import __version__
from chatgate.agents.registry import build_agents
from chatgate.channels.registry import ChannelRegistry
from chatgate.channels.types import Target
from chatgate.config.base import secret_value
from chatgate.config.loader import LoadedConfig
from chatgate.gateway import commands as cmd
from chatgate.gateway.callbacks import CallbackPayloads
from chatgate.gateway.clock import Clock, SystemClock
from chatgate.gateway.db import Database
from chatgate.gateway.degraded import DegradedRegistry
from chatgate.gateway.delivery import Delivery
from chatgate.gateway.dlq import DeadLetters, DeadTargets
from chatgate.gateway.events import EventBus
from chatgate.gateway.http_app import DynamicRoutes, build_app
from chatgate.gateway.journal import Journal
from chatgate.gateway.liveness import LoopWatchdog
from chatgate.gateway.memory_monitor import MemoryMonitor, MemorySource, ProcMemorySource
from chatgate.gateway.metrics import Metrics
from chatgate.gateway.pairing import PairingService
from chatgate.gateway.pipeline import Pipeline
from chatgate.gateway.runtime import Runtime, rate_spec, retry_policy
from chatgate.gateway.sdnotify import Notifier
from chatgate.gateway.sessions import SessionCache
from chatgate.gateway.state_lock import StateLock
from chatgate.gateway.store import SqliteSessionStore
from chatgate.gateway.supervisor import ChannelSupervisor
from chatgate.gateway.turnlock import LocalTurnLock
from chatgate.policies.loopguard import BotLoopGuard, LoopPolicy
from chatgate.policies.ratelimit import RateLimiter
from chatgate.presentation.model import OutboundMessage, message_from_dict

log = logging.getLogger("chatgate.gateway")
DB_FILE = "chatgate.db"
PAIRING_POLL_S = 2.0
PURGE_EVERY_S = 3600.0


class Gateway:
    def __init__(
        self,
        loaded: LoadedConfig,
        *,
        clock: Clock | None = None,
        registry: ChannelRegistry | None = None,
        env: Mapping[str, str] | None = None,
        memory_source: MemorySource | None = None,
        on_secrets: Callable[[frozenset[str]], None] | None = None,
    ) -> None:
        self.loaded = loaded
        self.clock = clock or SystemClock()
        self.registry = registry or ChannelRegistry()
        self.env = os.environ if env is None else env
        self.metrics = Metrics()
        self.routes = DynamicRoutes()
        self.events = EventBus()
        self.degraded = DegradedRegistry()
        self.notifier = Notifier(self.env)
        self.watchdog = LoopWatchdog(
            interval_s=loaded.config.gateway.watchdog.interval_s,
            max_lag_s=loaded.config.gateway.watchdog.max_lag_s,
        )
        self.memory_source = memory_source or ProcMemorySource(
            loaded.config.gateway.memory.limit_mb
        )
        self.on_secrets = on_secrets
        self.state_lock = StateLock(loaded.state_dir)
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
        self._reload_lock = asyncio.Lock()
        self.rt: Runtime
        self.pipeline: Pipeline
        self.channels: ChannelSupervisor
        self.memory: MemoryMonitor

    @property
    def api_token(self) -> str | None:
        return secret_value(self.loaded.config.gateway.api_token)

    async def start(self) -> None:
        cfg = self.loaded.config
        gw = cfg.gateway
        agents = build_agents(
            cfg, self.env
        )  # a broken python agent is a config error: fail before binding
        self.started_at = self.clock.time()
        self.loaded.state_dir.mkdir(parents=True, exist_ok=True)
        self.state_lock.acquire()  # before anything reads the journal
        await self.db.open()
        journal = Journal(self.db)
        dlq, dead = DeadLetters(self.db), DeadTargets(self.db)
        pairing = PairingService(self.db)
        await asyncio.gather(dlq.load(), dead.load(), pairing.load())
        self.metrics.dlq_size.set(dlq.size)
        self.events.load_plugins()
        callbacks = self.callbacks = CallbackPayloads(self.db)
        self.channels = ChannelSupervisor(
            self.registry,
            self.routes,
            self.metrics,
            self.loaded.state_dir,
            self.clock,
            self.degraded,
            gw.supervision,
            kv={"callbacks": callbacks},
        )
        delivery = Delivery(
            self.channels,
            dlq,
            dead,
            retry_policy(self.loaded),
            self.clock,
            self.events,
            self.metrics,
            callback_store=callbacks,
        )
        cache = SessionCache(
            SqliteSessionStore(self.db),
            max_warm=gw.sessions.warm_max,
            max_messages=gw.sessions.max_messages,
        )
        self.memory = MemoryMonitor(
            self.memory_source,
            cache,
            self.clock,
            shed_ratio=gw.memory.shed_ratio,
            headroom_ratio=gw.memory.headroom_ratio,
            interval_s=gw.memory.interval_s,
            on_evict=self._evicted,
            on_sample=self._sampled,
        )
        self.rt = Runtime(
            loaded=self.loaded,
            clock=self.clock,
            journal=journal,
            cache=cache,
            agents=agents,
            delivery=delivery,
            dlq=dlq,
            dead=dead,
            pairing=pairing,
            events=self.events,
            metrics=self.metrics,
            limiter=RateLimiter(rate_spec(self.loaded)),
            loop_guard=BotLoopGuard(
                LoopPolicy(gw.loop_guard.max_bot_turns, gw.loop_guard.window_s)
            ),
            lock=LocalTurnLock(),
            owner=f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}",
            channels=self.channels,
            degraded=self.degraded,
            memory=self.memory,
            rng=random.Random(),
        )
        self.pipeline = Pipeline(self.rt)
        self.channels.build(self.loaded.channels)
        await self.pipeline.recover()
        await self._serve_http()
        self._spawn(self.watchdog.run(), "loop-watchdog")
        await self.channels.start_all(self.pipeline)
        self.ready = True
        self.notifier.ready(f"chatgate {__version__} ready on port {self.port}")
        self._spawn(self.notifier.watchdog_loop(lambda: self.health()[0]), "sd-watchdog")
        self._spawn(self.memory.run(), "memory-monitor")
        self._spawn(self._pairing_notifier(), "pairing-notifier")
        self._spawn(self._purge_journal(), "journal-purge")
        self._spawn(self._prewarm(), "prewarm")
        log.info(
            "chatgate ready",
            extra={
                "version": __version__,
                "port": self.port,
                "channels": ",".join(self.channels.statuses) or "-",
            },
        )

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        self._tasks.append(asyncio.create_task(coro, name=name))

    async def _serve_http(self) -> None:
        http = self.loaded.config.gateway.http
        self._runner = web.AppRunner(
            build_app(self, self.routes),
            access_log=None,
            handle_signals=False,
            shutdown_timeout=5.0,
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
        self.notifier.stopping()
        if not hasattr(self, "rt"):
            await self.db.close()
            self.state_lock.release()
            self._stopped.set()
            return
        self.rt.draining = True
        timeout = self.loaded.config.gateway.drain_timeout_s
        log.info("draining", extra={"timeout_s": timeout})
        await self.channels.stop_intake()
        if not await self.pipeline.drain(timeout):
            cancelled = self.pipeline.abandon()
            log.warning(
                "drain timeout; unfinished turns stay journaled and resume on the next start",
                extra={"cancelled": cancelled},
            )
            await self.pipeline.drain(5.0)
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
        await self.callbacks.flush()
        await self.db.close()
        self.state_lock.release()
        self._stopped.set()
        log.info("stopped")

    async def reload(self) -> dict[str, Any]:
        """Re-read the config file and apply it live (see gateway.reload)."""
        from chatgate.gateway.reload import apply_reload

        async with self._reload_lock:
            return await apply_reload(self)

    # -- health, readiness, status ---------------------------------------------------------

    def health(self) -> tuple[bool, dict[str, Any]]:
        snapshot = self.watchdog.snapshot()
        if not self.watchdog.healthy:
            return False, {"status": "event loop stalled", **snapshot}
        return True, {"status": "ok", **snapshot}

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
        kind = report.kind.value if report.kind else None
        return {"found": True, "id": entry_id, "status": report.status.value, "kind": kind}

    # -- hooks and background loops ------------------------------------------------------------

    def _evicted(self, key: str) -> None:
        self.metrics.evictions.inc()
        log.info("evicted a warm session under memory pressure", extra={"session": key})

    def _sampled(self, status: Any) -> None:
        self.metrics.memory_rss.set(status.rss_bytes)
        self.metrics.memory_limit.set(status.limit_bytes or 0)
        self.metrics.loop_lag.set(self.watchdog.lag_s)
        self.metrics.warm_sessions.set(len(self.rt.cache))

    async def _pairing_notifier(self) -> None:
        while True:
            await self.clock.sleep(PAIRING_POLL_S)
            try:
                for approved in await self.rt.pairing.take_unnotified():
                    section = self.loaded.channel(approved.channel)
                    chat = section.chat if section is not None else None
                    if approved.chat_id and (chat is None or chat.pairing_notify):
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
            if prewarm is not None and getattr(
                self.loaded.config.agents.get(name), "prewarm", False
            ):
                try:
                    await prewarm()
                except Exception:
                    log.exception("agent prewarm failed", extra={"agent": name})
