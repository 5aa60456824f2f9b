"""Media of the fake Graph API: ``GET /{version}/{media-id}`` answers a URL, and that URL (on the
same server, bearer token required, as Meta's are) serves the bytes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class MediaStore:
    items: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # id → (bytes, mime)
    downloads: list[str] = field(default_factory=list)
    token: str = ""

    def add(self, media_id: str, data: bytes, mime: str) -> None:
        self.items[media_id] = (data, mime)

    def install(self, app: web.Application, token: str) -> None:
        self.token = token
        app.router.add_get("/media-files/{media_id}", self._download)

    def lookup(self, media_id: str, base: str) -> dict[str, Any]:
        data, mime = self.items[media_id]
        return {
            "id": media_id,
            "url": f"{base}/media-files/{media_id}",
            "mime_type": mime,
            "sha256": hashlib.sha256(data).hexdigest(),
            "file_size": len(data),
            "messaging_product": "whatsapp",
        }

    async def _download(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.Response(status=401, text="unauthorized")
        media_id = request.match_info["media_id"]
        if media_id not in self.items:
            return web.Response(status=404)
        self.downloads.append(media_id)
        data, mime = self.items[media_id]
        return web.Response(body=data, content_type=mime)
