"""Files of the fake Slack: ``url_private`` downloads that need the bot token as a bearer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class SlackFiles:
    """``add`` returns the file object a message event carries in ``files``."""

    tokens: Callable[[], set[str]] = set
    origin: Callable[[], str] = str
    items: dict[str, tuple[bytes, str, str]] = field(
        default_factory=dict
    )  # id → (data, mime, name)
    downloads: list[str] = field(default_factory=list)
    refused: int = 0  # downloads without a valid bearer token

    def install(self, app: web.Application) -> None:
        app.router.add_get("/files-pri/{file_id}/{name}", self._download)

    def add(self, file_id: str, data: bytes, mime: str, name: str) -> dict[str, Any]:
        self.items[file_id] = (data, mime, name)
        return {
            "id": file_id,
            "name": name,
            "mimetype": mime,
            "size": len(data),
            "url_private": f"{self.origin()}/files-pri/{file_id}/{name}",
            "url_private_download": f"{self.origin()}/files-pri/{file_id}/{name}",
        }

    async def _download(self, request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or auth[7:] not in self.tokens():
            self.refused += 1  # Slack answers a login page, not the file
            return web.Response(status=302, headers={"Location": "/signin"})
        item = self.items.get(request.match_info["file_id"])
        if item is None:
            return web.Response(status=404)
        self.downloads.append(request.match_info["file_id"])
        return web.Response(body=item[0], content_type=item[1])
