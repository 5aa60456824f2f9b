"""The single HTTP server: health, readiness, metrics, the operator API and channel routes.

Channel routes (webhooks, Telegram webhook mode, Slack events) are mounted at runtime through
DynamicRoutes, so a config reload can add or drop routes without rebuilding the app.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from chatgate.channels.base import Handler

if TYPE_CHECKING:
    from chatgate.gateway.app import Gateway

MAX_BODY = 8 * 1024 * 1024  # routes enforce their own, smaller limits
GATEWAY_KEY = web.AppKey("gateway", object)


class DynamicRoutes:
    """Path → method → handler table behind one catch-all aiohttp route.

    Exact paths win; otherwise the longest prefix route whose path is a directory of the request
    path serves it (web chat pages, static files, WebSockets are ordinary handlers).
    """

    def __init__(self) -> None:
        self._routes: dict[str, dict[str, Handler]] = {}
        self._prefixes: dict[str, dict[str, Handler]] = {}

    def add(self, method: str, path: str, handler: Handler, *, prefix: bool = False) -> None:
        table = self._prefixes if prefix else self._routes
        key = path.rstrip("/") if prefix else path
        table.setdefault(key, {})[method.upper()] = handler

    def remove(self, path: str) -> None:
        self._routes.pop(path, None)
        self._prefixes.pop(path.rstrip("/"), None)

    def _lookup(self, path: str) -> dict[str, Handler] | None:
        methods = self._routes.get(path)
        if methods is not None:
            return methods
        best: str | None = None
        for prefix in self._prefixes:
            if (path == prefix or path.startswith(prefix + "/")) and (
                best is None or len(prefix) > len(best)
            ):
                best = prefix
        return self._prefixes[best] if best is not None else None

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        methods = self._lookup(request.path)
        if methods is None:
            raise web.HTTPNotFound(
                text=json.dumps({"error": "not found"}), content_type="application/json"
            )
        handler = methods.get(request.method) or methods.get("*")
        if handler is None:
            raise web.HTTPMethodNotAllowed(request.method, list(methods))
        return await handler(request)


def _gateway(request: web.Request) -> Gateway:
    return request.app[GATEWAY_KEY]  # type: ignore[return-value]


def build_app(gateway: Gateway, routes: DynamicRoutes) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY, middlewares=[_api_auth])
    app[GATEWAY_KEY] = gateway
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/api/status", api_status)
    app.router.add_get("/api/dlq", api_dlq_list)
    app.router.add_post("/api/dlq/{id}/replay", api_dlq_replay)
    app.router.add_post("/api/reload", api_reload)
    app.router.add_post("/api/channels/{name}/restart", api_channel_restart)
    app.router.add_route("*", "/{tail:.*}", routes.dispatch)
    return app


@web.middleware
async def _api_auth(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    if request.path.startswith("/api/"):
        token = _gateway(request).api_token
        if token is not None:
            given = request.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                return web.json_response({"error": "missing or wrong bearer token"}, status=401)
    return await handler(request)


async def healthz(request: web.Request) -> web.Response:
    healthy, detail = _gateway(request).health()
    return web.json_response(detail, status=200 if healthy else 503)


async def readyz(request: web.Request) -> web.Response:
    ready, detail = _gateway(request).readiness()
    return web.json_response(detail, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    body = _gateway(request).metrics.render()
    return web.Response(
        body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}
    )


async def api_status(request: web.Request) -> web.Response:
    return web.json_response(await _gateway(request).status())


async def api_dlq_list(request: web.Request) -> web.Response:
    entries = await _gateway(request).rt.dlq.list(int(request.query.get("limit", "100")))
    return web.json_response({"entries": [e.to_dict() for e in entries]})


async def api_dlq_replay(request: web.Request) -> web.Response:
    try:
        entry_id = int(request.match_info["id"])
    except ValueError:
        return web.json_response({"error": "id must be an integer"}, status=400)
    result: dict[str, Any] = await _gateway(request).replay_dead_letter(entry_id)
    return web.json_response(result, status=200 if result.get("found") else 404)


async def api_reload(request: web.Request) -> web.Response:
    result = await _gateway(request).reload()
    return web.json_response(result, status=200 if result.get("ok") else 422)


async def api_channel_restart(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    found = await _gateway(request).channels.restart(name)
    return web.json_response({"ok": found, "channel": name}, status=200 if found else 404)
