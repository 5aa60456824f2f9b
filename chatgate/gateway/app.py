"""The Gateway's lifecycle: start, serve, reload, drain, stop (wiring is `builder.py`).

start(): lock the state dir → open state → resume unfinished journal entries → serve HTTP →
start channels → ready. stop(): not ready → channels stop intake → in-flight turns finish within
drain_timeout_s (the rest stay pending in the journal for the next start) → channels stop →
state closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from aiohttp import web

from chatgate import __version__
from chatgate.channels.registry import ChannelRegistry
from chatgate.clock import Clock, sleep_or
from chatgate.config.base import secret_value
from chatgate.config.loader import LoadedConfig
from chatgate.config.redact import scrub
from chatgate.feature.base import Feature
from chatgate.gateway.events import EventBus
from chatgate.gateway.http.app import DynamicRoutes, build_app
from chatgate.gateway.http.local_api import LocalApi
from chatgate.gateway.http.server import CappedTCPSite, install_accept_throttle, runner_options
from chatgate.gateway.http.status import Lifecycle, build_status
from chatgate.gateway.intake.pipeline import Pipeline
from chatgate.gateway.metrics import Metrics
from chatgate.gateway.operator_actions import DaemonOperator, declared_actions
from chatgate.gateway.process.gc_tuning import GcTuning
from chatgate.gateway.process.memory_monitor import MemoryMonitor
from chatgate.gateway.process.sdnotify import Notifier
from chatgate.gateway.process.state_lock import StateLock
from chatgate.gateway.reload import apply_reload
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.supervision.degraded import DegradedRegistry
from chatgate.gateway.supervision.directory import ChannelDirectory
from chatgate.http_input.client_errors import install_client_error_log
from chatgate.media.files import sweep as sweep_media
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.text_ids import TextId
from chatgate.operator.actions import Action, AnyAction, Download, Result
from chatgate.operator.arguments import EntryArgs
from chatgate.operator.catalog import DLQ_REPLAY
from chatgate.secure_compare import secure_equals
from chatgate.state.outage import OutageReporter
from chatgate.tasks import cancel_and_wait

log = logging.getLogger("chatgate.gateway")
PAIRING_POLL_S = 2.0
PURGE_EVERY_S = 3600.0
TASKS_STOP_S = 5.0  # the background loops, once cancelled, at stop


@dataclass
class GatewayParts:
    """What `GatewayBuilder` hands the lifecycle."""

    rt: Runtime
    pipeline: Pipeline
    registry: ChannelRegistry
    routes: DynamicRoutes
    env: Mapping[str, str]
    notifier: Notifier
    state_lock: StateLock
    features: tuple[Feature, ...] = ()
    on_secrets: Callable[[frozenset[str]], None] | None = None


F = TypeVar("F", bound=Feature)
A = TypeVar("A")
R = TypeVar("R", bound=Result)


class Gateway:
    def __init__(self, parts: GatewayParts) -> None:
        self.rt = parts.rt
        self.pipeline = parts.pipeline
        self.registry = parts.registry
        self.routes = parts.routes
        self.env = parts.env
        self.notifier = parts.notifier
        self.state_lock = parts.state_lock
        self.on_secrets = parts.on_secrets
        self.features = parts.features
        self.local_api = LocalApi(self.rt.state_dir)
        self.operator = DaemonOperator(self.rt, self.features)
        self.actions = declared_actions(self.features)
        self.life = Lifecycle()
        self._gc = GcTuning()
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._opened = False
        self._stopped = asyncio.Event()
        self._reload_lock = asyncio.Lock()

    def feature(self, kind: type[F]) -> F:
        """The running feature of type ``kind`` (KeyError when the build did not add one)."""
        for feature in self.features:
            if isinstance(feature, kind):
                return feature
        raise KeyError(kind.__name__)

    # Components, by their everyday names.
    @property
    def loaded(self) -> LoadedConfig:
        return self.rt.loaded

    @property
    def clock(self) -> Clock:
        return self.rt.clock

    @property
    def channels(self) -> ChannelDirectory:
        return self.rt.channels

    @property
    def metrics(self) -> Metrics:
        return self.rt.metrics

    @property
    def events(self) -> EventBus:
        return self.rt.events

    @property
    def degraded(self) -> DegradedRegistry:
        return self.rt.degraded

    @property
    def memory(self) -> MemoryMonitor:
        return self.rt.memory

    @property
    def port(self) -> int | None:
        return self.life.port

    @property
    def draining(self) -> bool:
        return self.life.draining

    # -- start and stop -------------------------------------------------------------------

    async def start(self) -> None:
        rt = self.rt
        self.life.started_at = rt.clock.time()
        rt.state_dir.mkdir(parents=True, exist_ok=True)
        self.state_lock.acquire()  # before anything reads the journal
        await asyncio.to_thread(sweep_media, rt.state_dir)  # a crash's leftover downloads
        await rt.state.open()
        self._opened = True
        # Warm the agents (litellm's import, seconds of CPU) while the rest starts, and start the
        # channels only when they are warm: ready means the first message is answered at once.
        self._spawn(self._prewarm(), "prewarm")
        warming = self._tasks[-1]
        for feature in self.features:
            await feature.open()
        rt.metrics.dlq_size.set(await rt.dead_letters.count())
        rt.events.load_plugins()
        rt.channels.build(rt.loaded.channels)
        try:
            freed = await rt.turn_lock.release_leftovers()
        except StateUnavailable:  # the lock fails closed per turn; they expire by themselves
            freed = 0
        if freed:
            log.warning("freed turn locks left by this replica's last run", extra={"count": freed})
        await self.pipeline.recover()
        await self._serve_http()
        self._spawn(rt.watchdog.run(), "loop-watchdog")
        await warming
        await rt.channels.start_all(self.pipeline)
        self.life.ready = True
        self.notifier.ready(f"chatgate {__version__} ready on port {self.port}")
        self._spawn(self.notifier.watchdog_loop(lambda: self.health()[0]), "sd-watchdog")
        self._spawn(rt.memory.run(), "memory-monitor")
        self._spawn(self._pairing_notifier(), "pairing-notifier")
        self._spawn(self._purge_journal(), "journal-purge")
        self._spawn(self._adopt_orphans(), "journal-adopt")
        if rt.state.stores.ping is not None:
            self._spawn(self.pipeline.guard.watch(rt.state.stores.ping), "store-ping")
        for feature in self.features:
            for name, task in feature.tasks().items():
                self._spawn(task(), name)
        self._gc.apply()
        for feature in self.features:
            await feature.start()
        log.info(
            "chatgate ready",
            extra={
                "version": __version__,
                "port": self.port,
                "channels": ",".join(rt.channels.statuses) or "-",
            },
        )

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        self._tasks.append(asyncio.create_task(coro, name=name))

    async def _cancel_tasks(self) -> None:
        """Cancel the background loops and wait for them, bounded: a loop whose cancellation
        is absorbed (inside a client library's call) must not hold the stop, and it is named."""
        if not self._tasks:
            return
        _, stuck = await cancel_and_wait(self._tasks, TASKS_STOP_S)
        if stuck:
            names = sorted(task.get_name() for task in stuck if isinstance(task, asyncio.Task))
            log.warning("background tasks did not stop in time", extra={"tasks": names})

    async def _serve_http(self) -> None:
        http = self.loaded.config.gateway.http
        install_accept_throttle()
        install_client_error_log()
        self._runner = web.AppRunner(
            build_app(self, self.routes),
            access_log=None,
            handle_signals=False,
            shutdown_timeout=5,
            **runner_options(http),
        )
        await self._runner.setup()
        site = CappedTCPSite(
            self._runner,
            http.host,
            http.port,
            max_connections=http.max_connections,
            backlog=http.backlog,
        )
        await site.start()
        address = self._runner.addresses[0] if self._runner.addresses else (http.host, http.port)
        self.life.port = int(address[1])
        self.local_api.publish(f"http://{_client_host(http.host)}:{self.life.port}")

    async def stop(self) -> None:
        """Graceful shutdown; safe to call twice."""
        if self._stopped.is_set():
            return
        rt = self.rt
        self.life.draining = rt.draining = True
        self.life.ready = False
        self.notifier.stopping()
        self.local_api.withdraw()
        if self._opened:
            timeout = rt.config.gateway.drain_timeout_s
            log.info("draining", extra={"timeout_s": timeout})
            for feature in self.features:
                await feature.stop()
            await rt.channels.stop_intake()
            if not await self.pipeline.drain(timeout):
                cancelled = self.pipeline.abandon()
                log.warning(
                    "drain timeout; unfinished turns stay journaled and resume on the next start",
                    extra={"cancelled": cancelled},
                )
                await self.pipeline.drain(5.0)
        await self._cancel_tasks()
        await self.pipeline.guard.close()
        await rt.channels.stop_all()
        await rt.events.drain()
        if self._runner is not None:
            await self._runner.cleanup()
        for agent in rt.agents.values():
            with contextlib.suppress(Exception):
                await agent.aclose()
        if rt.tools is not None:
            await rt.tools.stop()
        for feature in reversed(self.features):
            await feature.close()
        await rt.state.close()
        self.state_lock.release()
        self._gc.undo()
        self._stopped.set()
        log.info("stopped")

    async def reload(self) -> dict[str, Any]:
        """Re-read the config file and apply it live (see gateway.reload)."""
        async with self._reload_lock:
            return await apply_reload(
                self.rt,
                catalog=self.registry,
                env=self.env,
                followers=(self.pipeline.apply_config, self._features_follow),
                on_secrets=self.on_secrets,
            )

    def _features_follow(self) -> None:
        for feature in self.features:
            feature.apply_config(self.rt.loaded)

    # -- what the HTTP surface asks ----------------------------------------------------------

    def accepts_token(self, given: str) -> bool:
        """The operator's configured API token or this process's local token (see local_api)."""
        configured = secret_value(self.loaded.config.gateway.api_token)
        return self.local_api.matches(given) or (
            configured is not None and _equal(given, configured)
        )

    @property
    def api_token_configured(self) -> bool:
        return secret_value(self.loaded.config.gateway.api_token) is not None

    def health(self) -> tuple[bool, dict[str, Any]]:
        snapshot = self.rt.watchdog.snapshot()
        if not self.rt.watchdog.healthy:
            return False, {"status": "event loop stalled", **snapshot}
        return True, {"status": "ok", **snapshot}

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        if self.life.draining:
            return False, {"status": "draining"}
        if not self.life.ready:
            return False, {"status": "starting"}
        unwritable = self.pipeline.guard.current()
        if unwritable is not None:
            degraded = {"status": "degraded", "degraded": [unwritable.to_dict()]}
            # A shared store (Redis) fails for every replica at once: staying in the Service lets
            # clients get this replica's own 503 + Retry-After instead of an empty backend.
            return self.rt.state.leases.shared, degraded
        standby = self.rt.channels.standby()
        if standby:  # ready all the same: this replica serves webhooks while another polls
            return True, {"status": "ready", "standby": standby}
        return True, {"status": "ready"}

    def metrics_text(self) -> bytes:
        return bytes(self.rt.metrics.render())

    async def status(self) -> dict[str, Any]:
        status = await build_status(self.rt, self.pipeline.scheduler, self.life)
        for feature in self.features:
            sections = scrub(dict(await feature.status()), self.rt.loaded.secrets)
            errors = sections.pop("state_errors", [])
            status.update(sections)
            if errors:
                status.setdefault("state_errors", []).extend(errors)
        return status

    async def restart_channel(self, name: str) -> bool:
        return bool(await self.rt.channels.restart(name))

    async def operate(self, action: Action[A, R], args: A) -> R:
        """Run one operator action (the same handler the CLI runs offline)."""
        return await action.handler(self.operator, args)

    async def answer(self, action: AnyAction, args: Any) -> dict[str, Any]:
        """An action's JSON answer, scrubbed of every configured secret like /api/status."""
        result = await self.operate(action, args)
        answer: dict[str, Any] = scrub(result.to_json(), self.rt.loaded.secrets)
        return answer

    async def download(self, action: AnyAction, args: Any) -> Download:
        result = await self.operate(action, args)
        assert isinstance(result, Download), action.name
        return replace(result, summary=scrub(dict(result.summary), self.rt.loaded.secrets))

    async def replay_dead_letter(self, entry_id: int) -> dict[str, Any]:
        return (await self.operate(DLQ_REPLAY, EntryArgs(entry_id))).to_json()

    # -- background loops ---------------------------------------------------------------------

    async def _pairing_notifier(self) -> None:
        rt = self.rt
        outage = OutageReporter(log, "pairing notifier", now=rt.clock.monotonic)
        while True:
            await rt.clock.sleep(PAIRING_POLL_S)
            try:
                for approved in await rt.pairing.take_unnotified():
                    section = rt.loaded.channel(approved.channel)
                    chat = section.chat if section is not None else None
                    if approved.chat_id and (chat is None or chat.pairing_notify):
                        await rt.delivery.deliver(
                            Target(approved.channel, approved.chat_id),
                            OutboundMessage.from_text(
                                self.pipeline.stages.voices.for_channel(approved.channel).text(
                                    TextId.PAIRING_APPROVED
                                )
                            ),
                        )
                outage.ok()
            except Exception as exc:
                outage.failed(exc)

    async def _purge_journal(self) -> None:
        rt = self.rt
        outage = OutageReporter(log, "journal purge", now=rt.clock.monotonic)
        while True:
            try:
                window = rt.config.gateway.dedupe_window_s
                removed = await rt.journal.purge(rt.clock.time() - window)
                if removed:
                    log.info("journal purged", extra={"rows": removed})
                outage.ok()
            except Exception as exc:
                outage.failed(exc)
            await rt.clock.sleep(PURGE_EVERY_S)

    async def _adopt_orphans(self) -> None:
        """Take over the unfinished messages of a replica that died (never any with one
        process per journal); checked twice per lease TTL."""
        rt = self.rt
        outage = OutageReporter(log, "adopting dead replicas' messages", now=rt.clock.monotonic)
        handed = asyncio.Event()  # another replica handed an answer over: claim it at once
        self._spawn(rt.journal.watch_hand_offs(handed.set), "journal-hand-offs")
        while True:
            await sleep_or(rt.clock, rt.config.gateway.redis.lease_ttl_s / 2, handed)
            handed.clear()
            try:
                await self.pipeline.adopt()
                outage.ok()
            except Exception as exc:
                outage.failed(exc)

    async def _prewarm(self) -> None:
        """Agents that can warm up (litellm's import) do it now, unless configured not to."""
        for name, agent in self.rt.agents.items():
            prewarm = getattr(agent, "prewarm", None)
            if prewarm is not None and getattr(self.rt.config.agents.get(name), "prewarm", False):
                try:
                    await prewarm()
                except Exception:
                    log.exception("agent prewarm failed", extra={"agent": name})
        self._gc.refreeze()


def _client_host(host: str) -> str:
    """Where a local client reaches a server bound to ``host``."""
    mapped = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    return f"[{mapped}]" if ":" in mapped else mapped


def _equal(given: str, expected: str) -> bool:
    return secure_equals(given, expected)
