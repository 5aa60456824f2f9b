"""The single HTTP server: health, readiness, metrics, the operator API and channel routes.

Channel routes (webhooks, Telegram webhook mode, Slack events) are mounted at runtime through
DynamicRoutes, so a config reload can add or drop routes without rebuilding the app.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

from aiohttp import web

from chatgate.channels.base import Handler
from chatgate.gateway.http import dashboard
from chatgate.gateway.http.operator_api import OperatorApi
from chatgate.http_input import BadInput
from chatgate.http_input.answers import refuse
from chatgate.model.errors import StateUnavailable
from chatgate.model.reasons import RefusalReason
from chatgate.operator.actions import SUMMARY_HEADER, AnyAction, Download
from chatgate.operator.context import CALLER
from chatgate.operator.parse import from_request

MAX_BODY = 8 * 1024 * 1024  # routes enforce their own, smaller limits


class DynamicRoutes:
    """Path → method → handler table behind one catch-all aiohttp route.

    Exact paths win; otherwise the longest prefix route whose path is a directory of the request
    path serves it (web chat pages, static files, WebSockets are ordinary handlers).
    """

    def __init__(self) -> None:
        self._routes: dict[str, dict[str, Handler]] = {}
        self._prefixes: dict[str, dict[str, Handler]] = {}
        self._private: set[str] = set()

    def add(
        self, method: str, path: str, handler: Handler, *, prefix: bool = False, token: bool = False
    ) -> None:
        table = self._prefixes if prefix else self._routes
        key = path.rstrip("/") if prefix else path
        table.setdefault(key, {})[method.upper()] = handler
        if token:
            self._private.add(path)

    def needs_token(self, path: str) -> bool:
        """Whether ``path`` (or a path it is under) was added with ``token``: the operator
        token is needed even to read, also without a configured token."""
        return any(path == p or path.startswith(p + "/") for p in self._private)

    def paths(self) -> set[str]:
        """Every path served here, exact and prefix (the route table, for checks and docs)."""
        return set(self._routes) | set(self._prefixes)

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
        """The route's handler, behind the same guard as the app's own routes."""
        if request.path.startswith("/api/") and (refused := _unauthorized(request)) is not None:
            return refused
        methods = self._lookup(request.path)
        if methods is None:
            raise web.HTTPNotFound(
                text=json.dumps({"error": "not found"}), content_type="application/json"
            )
        handler = methods.get(request.method) or methods.get("*")
        if handler is None:
            raise web.HTTPMethodNotAllowed(request.method, list(methods))
        try:
            return await handler(request)
        except StateUnavailable:
            return _store_down()


API_KEY = web.AppKey("operator_api", OperatorApi)
ROUTES_KEY = web.AppKey("dynamic_routes", DynamicRoutes)
_BEARER = re.compile(r"^\s*bearer\s+(\S+)\s*$", re.IGNORECASE)
_READ_METHODS = frozenset({"GET", "HEAD"})


def _api(request: web.Request) -> OperatorApi:
    return request.app[API_KEY]


def build_app(api: OperatorApi, routes: DynamicRoutes) -> web.Application:
    """The app with no middleware: aiohttp would run middleware on every request, channel
    webhooks included, so each route carries the guard itself (`guarded`, and the dynamic
    routes' dispatch)."""
    app = web.Application(client_max_size=MAX_BODY)
    app[API_KEY] = api
    app[ROUTES_KEY] = routes
    app.router.add_get("/healthz", guarded(healthz))
    app.router.add_get("/readyz", guarded(readyz))
    app.router.add_get("/metrics", guarded(metrics))
    app.router.add_get("/api/status", guarded(api_status))
    for action in api.actions.values():
        app.router.add_route(action.route.method, action.route.path, guarded(_action(action)))
    app.router.add_post("/api/reload", guarded(api_reload))
    app.router.add_post("/api/channels/{name}/restart", guarded(api_channel_restart))
    dashboard.add_routes(app, api, guarded)
    app.router.add_route("*", "/{tail:.*}", routes.dispatch)
    return app


def guarded(handler: Handler) -> Handler:
    """``handler`` behind the operator token (`_unauthorized`) and answering 503 while the
    state store is away (`_store_down`)."""

    async def guard(request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/api/") and (refused := _unauthorized(request)) is not None:
            return refused
        try:
            return await handler(request)
        except StateUnavailable:
            return _store_down()

    return guard


def _unauthorized(request: web.Request) -> web.Response | None:
    """Every /api/ call needs a token when one is configured; a call that changes something
    always needs one (the configured token or the local one from the state directory), also on
    loopback, since a same-host reverse proxy may forward every path. The 401, or None."""
    api = _api(request)
    match = _BEARER.match(request.headers.get("Authorization", ""))
    given = match.group(1) if match else ""
    needed = (
        api.api_token_configured
        or request.method not in _READ_METHODS
        or request.app[ROUTES_KEY].needs_token(request.path)
    )
    if needed and not (given and api.accepts_token(given)):
        return web.json_response({"error": "missing or wrong bearer token"}, status=401)
    return None


# What an /api/ caller is told to wait for while the state store is away (the guard's probe
# interval is a few seconds; a reconnecting Redis client is back within this).
STORE_RETRY_AFTER_S = 5


def _store_down() -> web.Response:
    """An operator action the state store cannot serve right now is a 503 with Retry-After
    (nothing was changed), never a 500."""
    return refuse(
        503,
        "the state store is unavailable; try again shortly",
        RefusalReason.STATE_UNAVAILABLE,
        retry_after_s=STORE_RETRY_AFTER_S,
    )


async def healthz(request: web.Request) -> web.Response:
    healthy, detail = _api(request).health()
    return web.json_response(detail, status=200 if healthy else 503)


async def readyz(request: web.Request) -> web.Response:
    ready, detail = _api(request).readiness()
    return web.json_response(detail, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    return web.Response(
        body=_api(request).metrics_text(),
        headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
    )


async def api_status(request: web.Request) -> web.Response:
    return web.json_response(await _api(request).status())


def _action(action: AnyAction) -> Handler:
    """The handler of one operator action: a missing or malformed argument is a 400 naming it;
    with ``not_found_404``, an answer saying it found nothing is a 404."""

    async def handle(request: web.Request) -> web.StreamResponse:
        asked_by = CALLER.set(request.remote or "unknown")
        try:
            args = await from_request(action, request)
            if action.route.download:
                return await _send(request, await _api(request).download(action, args))
            result = await _api(request).answer(action, args)
        except BadInput as bad:  # a malformed argument, or one the handler refused
            return bad.answer()
        finally:
            CALLER.reset(asked_by)
        missing = action.route.not_found_404 and not result.get("found")
        return web.json_response(result, status=404 if missing else 200)

    return handle


async def _send(request: web.Request, download: Download) -> web.StreamResponse:
    """The download's bytes as they are made (a failure midway cuts the response short)."""
    name = quote(download.filename, safe="")
    response = web.StreamResponse(
        headers={
            "Content-Type": download.content_type,
            "Content-Disposition": f"attachment; filename*=UTF-8''{name}",
            SUMMARY_HEADER: json.dumps(download.summary, separators=(",", ":")),
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        }
    )
    try:
        await response.prepare(request)
        async for chunk in download.chunks:
            await response.write(chunk)
        await response.write_eof()
    finally:
        await download.chunks.aclose()
    return response


async def api_reload(request: web.Request) -> web.Response:
    result = await _api(request).reload()
    return web.json_response(result, status=200 if result.get("ok") else 422)


async def api_channel_restart(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    found = await _api(request).restart_channel(name)
    return web.json_response({"ok": found, "channel": name}, status=200 if found else 404)
