"""Media of the fake Graph API: ``GET /{version}/{media-id}`` answers a URL, and that URL (on the
same server, bearer token required, as Meta's are) serves the bytes."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class MediaStore:
    items: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # id → (bytes, mime)
    downloads: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)  # every download asked for, served or not
    token: str = ""
    arrived: asyncio.Event = field(default_factory=asyncio.Event)  # a download was asked for
    released: asyncio.Event = field(default_factory=asyncio.Event)  # `stall()` holds until set

    def __post_init__(self) -> None:
        self.released.set()

    def stall(self) -> None:
        """Hold every download open until `release()` (a crash mid-download)."""
        self.released.clear()

    def release(self) -> None:
        self.released.set()

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
        self.requested.append(media_id)
        self.arrived.set()
        await self.released.wait()
        if media_id not in self.items:
            return web.Response(status=404)
        self.downloads.append(media_id)
        data, mime = self.items[media_id]
        return web.Response(body=data, content_type=mime)
