"""`chatgate run`: the foreground daemon with signal handling (TERM/INT drain, HUP reloads)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from chatgate.cli.common import die, load_or_exit
from chatgate.config.errors import EX_CONFIG, ConfigError
from chatgate.config.loader import LoadedConfig
from chatgate.gateway.logs import setup_logging
from chatgate.gateway.process.event_loop import loop_factory
from chatgate.gateway.process.malloc_tuning import tune_malloc
from chatgate.state.factory import StoreUnreachable

if TYPE_CHECKING:
    from chatgate.gateway.app import Gateway

log = logging.getLogger("chatgate")
EX_OSERR = 71
EX_TEMPFAIL = 75


def run_daemon(given: str | None, *, log_format: str | None, log_level: str | None) -> int:
    from chatgate.channels.registry import ChannelRegistry

    loaded = load_or_exit(given)
    gw_cfg = loaded.config.gateway
    logs = setup_logging(
        log_level or gw_cfg.log.level,
        log_format or gw_cfg.log.format,
        loaded.secrets,
        noisy_loggers=ChannelRegistry().noisy_loggers(),
    )
    for warning in loaded.warnings:
        log.warning(warning)
    tune_malloc()  # the daemon only: tests and tools keep the C library's defaults
    try:
        with asyncio.Runner(loop_factory=loop_factory(gw_cfg.event_loop)) as runner:
            return runner.run(_serve(loaded, logs.scrubber.update))
    except ConfigError as exc:
        die(str(exc), EX_CONFIG)
    except KeyboardInterrupt:
        return 0
    finally:
        logs.stop()


async def _serve(loaded: LoadedConfig, on_secrets: Callable[[frozenset[str]], None]) -> int:
    from chatgate.gateway.builder import GatewayBuilder

    gateway = GatewayBuilder(loaded).on_secrets(on_secrets).build()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    reloads: set[asyncio.Task[object]] = set()

    def on_sighup() -> None:
        log.info("SIGHUP: reloading the config")
        task: asyncio.Task[object] = asyncio.ensure_future(gateway.reload())
        reloads.add(task)
        task.add_done_callback(reloads.discard)

    loop.add_signal_handler(signal.SIGHUP, on_sighup)
    try:
        await gateway.start()
    except StoreUnreachable as exc:
        log.error("cannot start: %s", exc)
        await _safe_stop(gateway)
        return EX_TEMPFAIL  # the store may come back: systemd restarts on this one
    except OSError as exc:
        log.error("cannot start: %s%s", exc, _ownership_hint(exc, loaded.state_dir))
        await _safe_stop(gateway)
        return EX_OSERR  # e.g. the port is taken
    await stop.wait()
    log.info("signal received, shutting down")
    await gateway.stop()
    return 0


def _ownership_hint(exc: OSError, state_dir: Path) -> str:
    """For a state dir this user cannot write (a volume created by root): the command fixing it."""
    if not isinstance(exc, PermissionError):
        return ""
    uid, gid = os.getuid(), os.getgid()
    return (
        f" — the state dir {state_dir} must be writable by uid {uid}: "
        f"chown -R {uid}:{gid} {state_dir} (a container volume: chown it to {uid}:{gid} on the host)"
    )


async def _safe_stop(gateway: Gateway) -> None:
    try:
        await gateway.stop()
    except Exception:
        log.exception("cleanup after failed start")
