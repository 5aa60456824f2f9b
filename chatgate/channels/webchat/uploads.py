"""Files a browser uploads before sending them: a directory under the state dir, kept for a TTL.

``POST {path}/api/upload`` streams one multipart file part here (never the whole file in
memory) and answers an opaque upload id; ``api/send`` then names that id in ``attachments`` and
the web chat adapter's ``fetch`` copies the stored file to the media step's temporary file.
Each upload is two files, ``ID`` (the bytes) and ``ID.json`` (owner session, name, sniffed
type, size, time); anything older than the TTL is refused and swept.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from chatgate.channels.webui import json_answer
from chatgate.media.sniff import sniff
from chatgate.model.messages import AttachmentKind

log = logging.getLogger("chatgate.webchat")
CHUNK = 256 * 1024
SWEEP_EVERY_S = 60.0
MAX_LIVE_PER_SESSION = 20  # uploads one browser may hold within the TTL (disk-filling guard)
_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class UploadTooLarge(Exception):
    """The part grew past the cap; nothing of it is kept."""


class TooManyUploads(Exception):
    """The session holds MAX_LIVE_PER_SESSION unexpired uploads already."""


@dataclass(frozen=True, slots=True)
class Upload:
    """One stored upload's metadata (the bytes live beside it)."""

    id: str
    sid: str
    name: str
    mime: str
    size: int
    created: float

    @property
    def kind(self) -> str:
        """The attachment kind the sniffed type stands for."""
        major = self.mime.split("/", 1)[0]
        if major in ("image", "audio", "video"):
            return major
        return AttachmentKind.DOCUMENT.value


def valid_upload_id(value: object) -> bool:
    return isinstance(value, str) and 16 <= len(value) <= 64 and set(value) <= _ID_CHARS


def _safe_name(name: str | None) -> str:
    """The file's base name as the browser sent it, without path parts or control characters."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = "".join(ch for ch in base if ch.isprintable()).strip()
    return cleaned[:120] or "upload"


class UploadStore:
    """Uploads of one web chat channel; ``clock`` is injectable so tests age them without waiting."""

    def __init__(
        self, root: Path, ttl_s: float, max_bytes: int, clock: Callable[[], float]
    ) -> None:
        self.root = root
        self.ttl_s = ttl_s
        self.max_bytes = max_bytes
        self.clock = clock
        self._last_sweep = float("-inf")
        self._recent: dict[str, list[float]] = {}  # sid -> upload times (this process only)

    async def open(self) -> None:
        await asyncio.to_thread(self.root.mkdir, parents=True, exist_ok=True)
        await self.sweep()

    async def save(self, sid: str, part: BodyPartReader) -> Upload:
        """Stream ``part`` to disk within ``max_bytes``; raises UploadTooLarge past it."""
        now = self.clock()
        if now - self._last_sweep >= SWEEP_EVERY_S:
            await self.sweep()
        recent = [t for t in self._recent.get(sid, ()) if now - t <= self.ttl_s]
        if len(recent) >= MAX_LIVE_PER_SESSION:
            raise TooManyUploads(f"at most {MAX_LIVE_PER_SESSION} files per {self.ttl_s:.0f} s")
        self._recent[sid] = [*recent, now]
        upload_id = secrets.token_urlsafe(18)
        data_path = self.root / upload_id
        fh: IO[bytes] = await asyncio.to_thread(data_path.open, "xb")
        size = 0
        try:
            while chunk := await part.read_chunk(CHUNK):
                size += len(chunk)
                if size > self.max_bytes:
                    raise UploadTooLarge(f"larger than {self.max_bytes} bytes")
                await asyncio.to_thread(fh.write, chunk)
        except BaseException:
            await asyncio.to_thread(fh.close)
            await asyncio.to_thread(data_path.unlink, True)
            raise
        await asyncio.to_thread(fh.close)
        mime = await asyncio.to_thread(sniff, data_path, part.headers.get("Content-Type"))
        upload = Upload(upload_id, sid, _safe_name(part.filename), mime, size, now)
        meta = json.dumps(asdict(upload))
        await asyncio.to_thread((self.root / f"{upload_id}.json").write_text, meta, "utf-8")
        return upload

    async def get(self, upload_id: str, sid: str | None = None) -> Upload | None:
        """The live upload named ``upload_id`` (owned by ``sid`` when given), else None."""
        if not valid_upload_id(upload_id):
            return None
        try:
            raw = await asyncio.to_thread((self.root / f"{upload_id}.json").read_text, "utf-8")
            upload = Upload(**json.loads(raw))
        except (OSError, ValueError, TypeError):
            return None
        if self.clock() - upload.created > self.ttl_s:
            return None
        if sid is not None and upload.sid != sid:
            return None
        return upload

    async def copy_to(self, upload: Upload, dest: Path) -> int:
        """Copy the stored bytes to ``dest``; returns the size."""
        await asyncio.to_thread(shutil.copyfile, self.root / upload.id, dest)
        return upload.size

    async def sweep(self) -> int:
        """Delete uploads past the TTL (and halves left by a crash); returns how many went."""
        self._last_sweep = now = self.clock()
        self._recent = {
            sid: kept
            for sid, times in self._recent.items()
            if (kept := [t for t in times if now - t <= self.ttl_s])
        }
        return await asyncio.to_thread(self._sweep, now)

    async def of_session(self, sid: str) -> list[Path]:
        """The stored files ``sid`` uploaded (a privacy request)."""
        return await asyncio.to_thread(self._of_session, sid)

    def _of_session(self, sid: str) -> list[Path]:
        found = []
        for meta in self.root.glob("*.json"):
            try:
                owner = json.loads(meta.read_text("utf-8")).get("sid")
            except (OSError, ValueError, AttributeError):
                continue
            data = meta.with_suffix("")
            if owner == sid and data.is_file():
                found.append(data)
        return found

    async def forget(self, sid: str) -> int:
        """Delete every file ``sid`` uploaded; how many went."""
        paths = await self.of_session(sid)

        def unlink() -> None:
            for path in paths:
                path.unlink(missing_ok=True)
                path.with_name(path.name + ".json").unlink(missing_ok=True)

        await asyncio.to_thread(unlink)
        self._recent.pop(sid, None)
        return len(paths)

    async def sweep_forever(self) -> None:
        """Sweep every SWEEP_EVERY_S, so expired uploads go even when nobody uploads."""
        while True:
            await asyncio.sleep(SWEEP_EVERY_S)
            try:
                await self.sweep()
            except OSError as exc:  # a full or read-only disk: try again next round
                log.warning("upload sweep failed", extra={"error": str(exc)})

    def _sweep(self, now: float) -> int:
        removed = 0
        try:
            entries = list(os.scandir(self.root))
        except FileNotFoundError:
            return 0
        names = {entry.name for entry in entries}
        for entry in entries:
            meta = entry.name.endswith(".json")
            if not meta and entry.name + ".json" in names:
                continue  # aged by its metadata below
            try:
                created = entry.stat().st_mtime
                if meta:
                    created = float(json.loads(Path(entry.path).read_text("utf-8"))["created"])
            except FileNotFoundError:
                continue
            except (OSError, ValueError, KeyError, TypeError):
                pass  # unreadable metadata: aged by its mtime
            if now - created > self.ttl_s:
                if meta:
                    Path(entry.path.removesuffix(".json")).unlink(missing_ok=True)
                Path(entry.path).unlink(missing_ok=True)
                removed += 1
        return removed


async def receive(request: web.Request, store: UploadStore, sid: str) -> web.Response:
    """Store the request's one ``file`` part; 201 with its id, 413 past the cap, 400 otherwise.

    The caller has checked origin, sign-in and CSRF already."""
    too_large = json_answer({"error": f"file larger than {store.max_bytes} bytes"}, 413)
    if request.content_length is not None and request.content_length > store.max_bytes + CHUNK:
        return too_large
    if not request.content_type.startswith("multipart/form-data"):
        return json_answer({"error": "send the file as multipart/form-data"}, 415)
    try:
        reader = await request.multipart()
        part = await reader.next()
        while part is not None and (not isinstance(part, BodyPartReader) or part.name != "file"):
            if isinstance(part, BodyPartReader):
                await part.release()
            part = await reader.next()
        if not isinstance(part, BodyPartReader):
            return json_answer({"error": "a multipart part named 'file' is required"}, 400)
        upload = await store.save(sid, part)
    except UploadTooLarge:
        return too_large
    except TooManyUploads as exc:
        return json_answer({"error": f"too many uploads: {exc}"}, 429)
    except (ValueError, AssertionError, ConnectionError, RequestPayloadError, HttpProcessingError):
        # malformed multipart, or the browser went away mid-file (nothing of it was kept)
        return json_answer({"error": "the upload could not be read"}, 400)
    body = {
        "upload_id": upload.id,
        "name": upload.name,
        "mime": upload.mime,
        "kind": upload.kind,
        "size": upload.size,
    }
    return json_answer(body, 201)


__all__ = [
    "TooManyUploads",
    "Upload",
    "UploadStore",
    "UploadTooLarge",
    "receive",
    "valid_upload_id",
]
