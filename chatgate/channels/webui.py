"""Browser pages on the gateway's port: packaged static assets under a strict policy, and SSE.

Shared by the web chat channel and the operator dashboard. Pages load only their own scripts and
styles (no inline code, nothing from other origins), cannot be framed, and send no referrer;
event streams are plain Server-Sent Events with a heartbeat so proxies keep them open.
"""

from __future__ import annotations

import hashlib
import html
import json
from importlib import resources
from string import Template
from typing import Any, TypeVar

from aiohttp import web

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
}
RETRY_MS = 1000
R = TypeVar("R", bound=web.StreamResponse)


def secured(response: R) -> R:
    """Add the pages' security headers to any response (JSON answers included)."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def json_answer(data: Any, status: int = 200) -> web.Response:
    return secured(web.json_response(data, status=status, headers={"Cache-Control": "no-store"}))


class StaticAssets:
    """The files of ``package``'s ``static`` directory, read once, served with an ETag."""

    def __init__(self, package: str, directory: str = "static") -> None:
        root = resources.files(package).joinpath(directory)
        self._files: dict[str, tuple[bytes, str, str]] = {}
        for entry in root.iterdir():
            suffix = "." + entry.name.rsplit(".", 1)[-1]
            if entry.is_file() and suffix in _TYPES:
                body = entry.read_bytes()
                etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
                self._files[entry.name] = (body, _TYPES[suffix], etag)

    def names(self) -> list[str]:
        return sorted(self._files)

    def serve(self, name: str, request: web.Request) -> web.Response:
        found = self._files.get(name)
        if found is None or name.endswith(".html"):
            raise web.HTTPNotFound()
        body, content_type, etag = found
        headers = {"ETag": etag, "Cache-Control": "no-cache"}
        if request.headers.get("If-None-Match") == etag:
            return secured(web.Response(status=304, headers=headers))
        return secured(
            web.Response(body=body, content_type=content_type, charset="utf-8", headers=headers)
        )

    def page(self, name: str, **values: str) -> web.Response:
        """An HTML page with ``$name`` placeholders filled in (values are HTML-escaped)."""
        body, _, _ = self._files[name]
        text = Template(body.decode("utf-8")).substitute(
            {k: html.escape(v, quote=True) for k, v in values.items()}
        )
        return secured(
            web.Response(
                text=text,
                content_type="text/html",
                charset="utf-8",
                headers={"Cache-Control": "no-store"},
            )
        )


def same_origin(request: web.Request) -> bool:
    """A browser names the page that made a request in `Origin`; it must be this server."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # not a cross-origin browser request (browsers always send it for those)
    return origin == f"{request.scheme}://{request.host}"


class SseStream:
    """One open Server-Sent Events response."""

    def __init__(self, response: web.StreamResponse) -> None:
        self.response = response

    @classmethod
    async def open(cls, request: web.Request) -> SseStream:
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",  # nginx: do not buffer the stream
            }
        )
        secured(response)
        await response.prepare(request)
        await response.write(f"retry: {RETRY_MS}\n\n".encode())
        return cls(response)

    async def send(self, event: str, data: Any, *, event_id: str | None = None) -> None:
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        head = f"id: {event_id}\n" if event_id is not None else ""
        await self.response.write(f"{head}event: {event}\ndata: {payload}\n\n".encode())

    async def heartbeat(self) -> None:
        await self.response.write(b": keep-alive\n\n")
