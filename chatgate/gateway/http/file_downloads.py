"""GET /files/<ref>/<name>: a stored reply file behind a signed, expiring link.

Only images of a few safe types are shown inline; everything else downloads as an attachment,
sandboxed and never sniffed, so an agent's file can never run as a page on the gateway's origin.
"""

from __future__ import annotations

import json
from urllib.parse import quote, unquote

from aiohttp import web

from chatgate.channels.base import Handler
from chatgate.clock import Clock
from chatgate.media.links import ROUTE, SAFE_INLINE, FileLinks
from chatgate.media.outgoing import FileMissing, OutgoingFiles


def _error(status: int, message: str) -> web.Response:
    return web.Response(
        status=status, text=json.dumps({"error": message}), content_type="application/json"
    )


def download_handler(files: OutgoingFiles, links: FileLinks, clock: Clock) -> Handler:
    async def download(request: web.Request) -> web.StreamResponse:
        parts = request.rel_url.raw_path.removeprefix(ROUTE + "/").split("/")
        q = request.query
        mime, exp, sig = q.get("type", ""), q.get("exp", ""), q.get("sig", "")
        if len(parts) != 2 or not links.valid(parts[0], mime, exp, sig, clock.time()):
            return _error(404, "no such file, or the link expired")
        try:
            path = files.path_of(parts[0])
        except FileMissing:
            return _error(404, "no such file, or the link expired")
        if not path.is_file():
            return _error(404, "no such file, or the link expired")
        disposition = "inline" if mime in SAFE_INLINE else "attachment"
        headers = {
            "Content-Type": mime if mime in SAFE_INLINE else "application/octet-stream",
            "Content-Disposition": f"{disposition}; filename*=UTF-8''{quote(unquote(parts[1]))}",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'",
            "Cache-Control": "private, max-age=300",
        }
        return web.FileResponse(path, headers=headers)

    return download
