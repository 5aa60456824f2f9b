"""GET /files/<ref>/<name>: a stored reply file behind a signed, expiring link; with the
sweep of files nobody can fetch any more, the reply files feature.

Only images of a few safe types are shown inline; everything else downloads as an attachment,
sandboxed and never sniffed, so an agent's file can never run as a page on the gateway's origin.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from urllib.parse import quote, unquote

from aiohttp import web

from chatgate.channels.base import Handler
from chatgate.clock import Clock
from chatgate.feature.base import Feature, Task
from chatgate.feature.ports import RouteTable
from chatgate.media.links import ROUTE, SAFE_INLINE, FileLinks
from chatgate.media.outgoing import FileMissing, OutgoingFiles, sweep_forever
from chatgate.state.protocols import DeadLetterStore


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


class ReplyFiles(Feature):
    """Files replies carry: their download route, their links' keys, and their sweep."""

    name = "reply_files"

    def __init__(
        self, files: OutgoingFiles, links: FileLinks, dead_letters: DeadLetterStore, clock: Clock
    ) -> None:
        self.files, self.links, self.dead_letters, self.clock = files, links, dead_letters, clock

    def mount(self, routes: RouteTable) -> None:
        routes.add("GET", ROUTE, download_handler(self.files, self.links, self.clock), prefix=True)

    def tasks(self) -> Mapping[str, Task]:
        return {"files-sweep": lambda: sweep_forever(self.files, self.dead_letters, self.clock)}

    async def open(self) -> None:
        await asyncio.to_thread(self.links.load)

    async def close(self) -> None:
        await self.files.close()
