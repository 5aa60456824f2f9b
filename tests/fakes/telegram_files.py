"""Files of the fake Bot API: ``getFile`` answers and ``/file/bot<token>/<file_path>`` downloads.

Telegram lets bots download files of at most 20 MB: a larger file's getFile answers
"Bad Request: file is too big" (its size is still announced in the message itself).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

BOT_DOWNLOAD_LIMIT = 20 * 1024 * 1024


@dataclass
class StoredFile:
    file_id: str
    data: bytes
    path: str
    size: int  # what Telegram announces (may differ from len(data) for an oversize stand-in)


@dataclass
class FileStore:
    files: dict[str, StoredFile] = field(default_factory=dict)
    downloads: list[str] = field(default_factory=list)  # file paths served, in order
    fail_downloads: int = 0  # the next N downloads answer 500

    def add(
        self, file_id: str, data: bytes, *, ext: str = "bin", size: int | None = None
    ) -> StoredFile:
        stored = StoredFile(
            file_id, data, f"files/{file_id}.{ext}", len(data) if size is None else size
        )
        self.files[file_id] = stored
        return stored

    def get_file(self, params: dict[str, Any]) -> dict[str, Any]:
        """The getFile result; raises LookupError / OverflowError for Bot API 400s."""
        stored = self.files.get(str(params.get("file_id") or ""))
        if stored is None:
            raise LookupError("Bad Request: invalid file_id")
        if stored.size > BOT_DOWNLOAD_LIMIT:
            raise OverflowError("Bad Request: file is too big")
        return {
            "file_id": stored.file_id,
            "file_unique_id": f"u-{stored.file_id}",
            "file_size": stored.size,
            "file_path": stored.path,
        }

    def download(self, token_ok: bool, path: str) -> web.Response:
        if not token_ok:
            return web.Response(status=401, text="Unauthorized")
        if self.fail_downloads > 0:
            self.fail_downloads -= 1
            return web.Response(status=500, text="Internal Server Error")
        for stored in self.files.values():
            if stored.path == path:
                self.downloads.append(path)
                return web.Response(body=stored.data, content_type="application/octet-stream")
        return web.Response(status=404, text="Not Found")
