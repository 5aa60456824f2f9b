"""`/api/config` and the Config page (`/dashboard/config`).

Mounted on the gateway's dynamic routes behind the /api/ middleware: every call needs the
operator token (reads too: the route is marked ``token``), sent in the Authorization header and
never a cookie (the dashboard's CSRF rule); a write from a page of another origin is refused.
Bodies are read through `chatgate/http_input` (bounded, UTF-8 JSON).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from chatgate.channels.webui import StaticAssets, json_answer
from chatgate.config_edit.service import ConfigEditor, Refused, issues_json
from chatgate.feature.ports import RouteTable
from chatgate.http_input import BadInput, InputReason, read_json, utf8_clean

PAGE = "/dashboard/config"
API = "/api/config"
MAX_BODY = 1024 * 1024  # a config file is a few kB; a MiB is past any real one
BY_NAMES = frozenset({"dashboard", "cli", "api"})
_ASSETS: StaticAssets | None = None


def assets() -> StaticAssets:
    global _ASSETS
    if _ASSETS is None:
        _ASSETS = StaticAssets(__package__ or "chatgate.config_edit")
    return _ASSETS


class ConfigApi:
    def __init__(self, editor: ConfigEditor) -> None:
        self.editor = editor

    def mount(self, routes: RouteTable) -> None:
        routes.add("GET", API, self.view, token=True)  # and every path under it
        routes.add("POST", API + "/check", self.check)
        routes.add("POST", API + "/apply", self.apply)
        routes.add("GET", PAGE, self.page)
        routes.add("GET", PAGE + "/static", self.static, prefix=True)

    async def page(self, request: web.Request) -> web.Response:
        return assets().page("config.html", base=PAGE)

    async def static(self, request: web.Request) -> web.Response:
        return assets().serve(request.path.rsplit("/", 1)[-1], request)

    def _json(self, data: dict[str, Any], status: int = 200) -> web.Response:
        return json_answer(self.editor.scrubbed(data), status)

    async def view(self, request: web.Request) -> web.StreamResponse:
        return await self._refusing(lambda: self._view())

    async def _view(self) -> web.Response:
        return self._json(await self.editor.view())

    async def check(self, request: web.Request) -> web.StreamResponse:
        async def act() -> web.Response:
            body = await _body(request, "text")
            checked = await self.editor.check(body["text"])
            summary = checked.summary
            return self._json(
                {
                    "ok": True,
                    "diff": checked.diff,
                    "changed": list(summary.keys()),
                    "added_lines": summary.added_lines,
                    "removed_lines": summary.removed_lines,
                    "warnings": list(checked.warnings),
                    "issues": issues_json(()),
                }
            )

        return await self._refusing(act, request)

    async def apply(self, request: web.Request) -> web.StreamResponse:
        async def act() -> web.Response:
            body = await _body(request, "text", "etag")
            by = str(body["by"]) if body.get("by") in BY_NAMES else "api"
            address = request.remote or "unknown"
            done = await self.editor.apply(body["text"], body["etag"], address=address, by=by)
            return self._json(done)

        return await self._refusing(act, request)

    async def _refusing(
        self, act: Callable[[], Awaitable[web.Response]], request: web.Request | None = None
    ) -> web.StreamResponse:
        """A write from another origin is a 403; a bad body a 400 naming the field; a refused
        change its status with the reason, the hint and the issues (key path and line)."""
        if request is not None and not same_host(request):
            message = "a config change must come from this gateway's own pages"
            return self._json({"ok": False, "error": message, "reason_code": "cross_origin"}, 403)
        try:
            return await act()
        except BadInput as bad:
            return bad.answer()
        except Refused as refused:
            return self._json(refused.to_json(), refused.status)


def same_host(request: web.Request) -> bool:
    """A browser names the page that made a request in `Origin`: it must be served by this
    gateway's host (the scheme may differ behind a TLS-terminating proxy). Without `Origin` it is
    no cross-site browser request (browsers send it on every cross-origin POST)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    try:
        return urlsplit(origin).netloc.lower() == request.host.lower()
    except ValueError:
        return False


async def _body(request: web.Request, *names: str) -> dict[str, Any]:
    data = await read_json(request, MAX_BODY)
    if not isinstance(data, dict):
        raise BadInput(400, InputReason.NOT_JSON, f"JSON body needs {', '.join(names)}")
    for name in names:
        if not isinstance(data.get(name), str):
            raise BadInput(400, InputReason.MISSING_PARAMETER, f"JSON body needs {name}")
    utf8_clean([data[n] for n in names], "a parameter")
    return data
