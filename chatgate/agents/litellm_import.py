"""Loading litellm for the daemon: imported once, offline, with the daemon's settings, on a
thread of its own (so a shutdown never waits for the multi-second import), and a completion
call that survives cancellation without leaving a request nobody awaits."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from types import ModuleType
from typing import Any

IMPORT_SWITCH_INTERVAL_S = 0.0005
ABANDON_S = 0.2  # a cancelled model call's grace to leave litellm's worker thread (completion)
OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
# Most model connections open at once per provider host (and in total). litellm keeps one cached
# SDK client per provider (key, base, timeout), whose aiohttp pool reads these at import; a call
# beyond the bound waits for a free connection. The bound is a guard (sockets, a runaway burst),
# not a throttle: aiohttp's per-request cost does not grow with open connections (httpcore's
# does, which is why litellm.aclient_session, an httpx client, is not used), so it sits above the
# turns a Telegram burst starts at once (getUpdates hands over at most 100 updates per poll).
MODEL_CONNECTIONS_PER_HOST = 256
POOL_ENV = {
    "AIOHTTP_CONNECTOR_LIMIT": str(2 * MODEL_CONNECTIONS_PER_HOST),
    "AIOHTTP_CONNECTOR_LIMIT_PER_HOST": str(MODEL_CONNECTIONS_PER_HOST),
}
# Module-level litellm settings, set once in ``import_litellm``. They are global to litellm, which
# is safe in the daemon: chatgate is litellm's only user in the process and never changes them
# back. chatgate registers no litellm logging callbacks (tests/agents pins that). Measured and left
# out: turn_off_message_logging (its redaction costs CPU per call), disable_streaming_logging (only
# the sync stream iterator reads it), litellm.aclient_session (an httpx client: httpcore's pool
# polls every open connection per request, ~5x the CPU per call at 200 concurrent calls).
DAEMON_SETTINGS: dict[str, Any] = {
    "telemetry": False,  # no usage telemetry
    "suppress_debug_info": True,  # no "Give Feedback / Get Help" banners on errors
    "drop_params": True,  # a provider that lacks a parameter gets the call without it
}

LITELLM_OTEL_CALLBACKS = ("otel",)  # litellm's own OpenTelemetry logger

_import_lock = threading.Lock()
_module: ModuleType | None = None


def import_litellm() -> ModuleType:
    """Import litellm once, offline, with the daemon's settings (``DAEMON_SETTINGS``, ``POOL_ENV``).

    Environment values are defaults: an operator's own ``AIOHTTP_CONNECTOR_LIMIT*`` wins.
    """
    global _module
    with _import_lock:
        if _module is None:
            for key, value in (OFFLINE_ENV | POOL_ENV).items():
                os.environ.setdefault(key, value)
            import litellm

            for name, value in DAEMON_SETTINGS.items():
                setattr(litellm, name, value)
            _no_otel_callback(litellm)
            _module = litellm
        return _module


def _no_otel_callback(litellm: ModuleType) -> None:
    """Keep litellm's own OpenTelemetry logger off: chatgate records each model call itself, so
    the call is never in a trace twice."""
    for name in ("callbacks", "success_callback", "failure_callback"):
        found = getattr(litellm, name, None)
        if isinstance(found, list):
            found[:] = [c for c in found if c not in LITELLM_OTEL_CALLBACKS]


async def litellm_module() -> ModuleType:
    """The litellm module, importing it on a daemon thread the first time.

    A daemon thread (not the loop's executor) so a shutdown during the multi-second import
    does not have to wait for it.
    """
    if _module is not None:
        return _module
    loop = asyncio.get_running_loop()
    future: asyncio.Future[ModuleType] = loop.create_future()

    def work() -> None:
        # The import is seconds of pure Python; hand the GIL back to the event loop often
        # meanwhile so health checks and turns stay responsive.
        previous = sys.getswitchinterval()
        sys.setswitchinterval(IMPORT_SWITCH_INTERVAL_S)
        module: ModuleType | None = None
        error: BaseException | None = None
        try:
            module = import_litellm()
        except BaseException as exc:
            error = exc
        finally:
            sys.setswitchinterval(previous)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(_settle, future, module, error)

    threading.Thread(target=work, name="litellm-import", daemon=True).start()
    return await future


async def completion(litellm: ModuleType, kwargs: dict[str, Any]) -> Any:
    """``litellm.acompletion``, safe to cancel: litellm builds the provider's request coroutine in
    a worker thread, and a cancel landing there drops that coroutine unawaited (a RuntimeWarning
    and a request nobody closes). A cancelled caller leaves the call ``ABANDON_S`` to get past
    that hand-over, then cancels the request itself; its outcome is read, never reported."""
    call = asyncio.ensure_future(litellm.acompletion(**kwargs))
    try:
        return await asyncio.shield(call)
    except asyncio.CancelledError:
        call.add_done_callback(_read_outcome)
        asyncio.get_running_loop().call_later(ABANDON_S, call.cancel)
        raise


def _read_outcome(call: asyncio.Future[Any]) -> None:
    if not call.cancelled():
        call.exception()


def _settle(
    future: asyncio.Future[ModuleType], module: ModuleType | None, exc: BaseException | None
) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    elif module is not None:
        future.set_result(module)
