"""The operator dashboard: `/dashboard` (a static page) and `/api/stream` (live snapshots).

The page is public but empty: everything it shows comes from the /api/*, which the API's
bearer-token middleware guards (`gateway.api_token`, or the daemon's local token). The page keeps
the token in sessionStorage and sends it as `Authorization: Bearer`, never as a cookie, so no
other site can make the operator's browser act on the gateway (CSRF-safe by construction).
`/api/stream` pushes the same data as `/api/status` plus the DLQ, pairing requests and the turn
statistics as Server-Sent Events, read with fetch() because EventSource cannot send headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from chatgate.channels.base import Handler
from chatgate.channels.webui import SseStream, StaticAssets
from chatgate.model.errors import StateUnavailable
from chatgate.operator.actions import AnyAction

if TYPE_CHECKING:
    from chatgate.gateway.http.operator_api import OperatorApi

PATH = "/dashboard"
DEFAULT_EVERY_S = 2.0
MIN_EVERY_S = 0.5
MAX_EVERY_S = 30.0
TICK_S = 0.25
_ASSETS: StaticAssets | None = None


def assets() -> StaticAssets:
    global _ASSETS
    if _ASSETS is None:
        _ASSETS = StaticAssets(__name__)
    return _ASSETS


async def snapshot(api: OperatorApi) -> dict[str, Any]:
    """Everything the page shows, in one answer: the status and each operator action that
    declares a dashboard part (secret-free: each part is scrubbed)."""
    data: dict[str, Any] = {"now": time.time(), "status": await api.status()}
    for action in api.actions.values():
        if action.dashboard is not None:
            data[action.dashboard.key] = await _part(api, action)
    return data


async def _part(api: OperatorApi, action: AnyAction) -> dict[str, Any]:
    """One action's answer; for a part read from the state store, empty with the reason while
    the store is away (the status part says so too), so the page keeps updating in an outage."""
    part = action.dashboard
    assert part is not None
    args = action.make_args(part.args)
    try:
        return await api.answer(action, args)
    except StateUnavailable as exc:
        if part.empty is None:
            raise
        return {**part.empty.to_json(), "error": str(exc)}


def _every(request: web.Request) -> float:
    try:
        every = float(request.query.get("every", DEFAULT_EVERY_S))
    except ValueError:
        every = DEFAULT_EVERY_S
    return min(MAX_EVERY_S, max(MIN_EVERY_S, every))


def add_routes(
    app: web.Application, api: OperatorApi, guarded: Callable[[Handler], Handler]
) -> None:
    """Mount the page, its assets and the live stream on the gateway's app, each behind
    ``guarded`` (the operator token, the state store's 503)."""

    async def page(request: web.Request) -> web.Response:
        return assets().page("index.html", base=PATH)

    async def static(request: web.Request) -> web.Response:
        return assets().serve(request.match_info["name"], request)

    async def stream(request: web.Request) -> web.StreamResponse:
        """A snapshot now and every `every` seconds; a last one, then `bye`, when draining."""
        every = _every(request)
        sse = await SseStream.open(request)
        with contextlib.suppress(ConnectionError):
            while True:
                data = await snapshot(api)
                draining = bool(data["status"].get("draining"))
                await sse.send("snapshot", data)
                if draining:
                    await sse.send("bye", {"reason": "the gateway is shutting down"})
                    break
                waited = 0.0
                while waited < every and api.readiness()[1].get("status") != "draining":
                    await asyncio.sleep(TICK_S)
                    waited += TICK_S
            await sse.response.write_eof()
        return sse.response

    app.router.add_get(PATH, guarded(page))
    app.router.add_get(PATH + "/", guarded(page))
    app.router.add_get(PATH + "/static/{name}", guarded(static))
    app.router.add_get("/api/stream", guarded(stream))
