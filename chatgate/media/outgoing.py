"""Files that replies carry, stored before the answer is recorded and removed once it is sent.

An agent hands over bytes, a local path (python agents) or a URL; `OutgoingFiles.store` turns each
into a file under ``<state_dir>/outgoing/<ref>`` and the reply keeps only the reference, so the
journal's stored answer, a resumed turn and a DLQ replay all upload the same bytes. A file that
cannot be stored (over the cap, unreadable, fetch failed) becomes a visible notice in the reply.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO

import aiohttp

from chatgate.agents.base import AgentReply
from chatgate.clock import Clock
from chatgate.media.links import FileLinks
from chatgate.model.outbound import Block, File, OutboundMessage, Text
from chatgate.model.text_ids import TextId
from chatgate.presentation.file_rules import MB, human_size
from chatgate.state.protocols import DeadLetterStore
from chatgate.texts.voice import Voice

log = logging.getLogger("chatgate.media.outgoing")
DEFAULT_MAX_BYTES = 50 * MB
FETCH_TIMEOUT_S = 30.0
_REF = re.compile(r"^[0-9a-f]{32}$")
DLQ_SCAN = 10_000
_GENERIC = frozenset({"", "application/octet-stream"})
_CHUNK = 64 * 1024
_FLUSH_BYTES = 1024 * 1024  # buffered chunks written to the file in one thread hop
_SNIFF_BYTES = 8192  # what type sniffing reads of a file's start
# Bytes of files just stored, kept for the delivery that reads them next (once): the upload then
# sends the bytes the agent handed over instead of reading its own write back (a 10 MB file:
# ~40 % of what the store costs on top of a bare upload). Oldest dropped beyond this.
RECENT_BYTES = 32 * MB


class StoreRefusal(StrEnum):
    """Why a file a reply carried could not be stored (logged and named in the notice)."""

    TOO_LARGE = "file_too_large"
    UNREADABLE = "file_unreadable"
    FETCH_FAILED = "file_fetch_failed"


class FileMissing(Exception):
    """The stored file behind a reference is gone (removed, or written on another host)."""


class _Refused(Exception):
    def __init__(self, reason: StoreRefusal, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _not_attached(voice: Voice, name: str, exc: _Refused, max_bytes: int) -> str:
    if exc.reason is StoreRefusal.TOO_LARGE:
        return voice.text(TextId.FILE_TOO_LARGE, name=name, max=voice.size(max_bytes))
    return voice.text(TextId.FILE_NOT_ATTACHED, name=name)


def has_files(message: OutboundMessage | None) -> bool:
    return message is not None and any(isinstance(b, File) for b in message.blocks)


async def store_files(
    reply: AgentReply, files: OutgoingFiles | None, voice: Voice | None = None
) -> AgentReply:
    """The reply with its files stored (done before the answer is recorded)."""
    if files is None or not has_files(reply.message):
        return reply
    assert reply.message is not None
    return replace(reply, message=await files.store(reply.message, voice))


def refs_of(message: OutboundMessage) -> list[str]:
    return [b.ref for b in message.blocks if isinstance(b, File) and b.ref]


MAX_NAME = 200


def file_name(name: str) -> str:
    """A reply file's name fit for a download link, a header and a chat: printable characters
    only (no CR/LF or line separators), no path separators, at most ``MAX_NAME``."""
    printable = "".join(c if c.isprintable() else " " for c in name)
    cleaned = " ".join(printable.replace("/", "_").replace("\\", "_").split())
    return cleaned[:MAX_NAME].strip() or "file"


class OutgoingFiles:
    """The outgoing-file store of one gateway (a directory in the state dir)."""

    def __init__(
        self, root: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, links: FileLinks | None = None
    ) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.links = links
        self._http: aiohttp.ClientSession | None = None
        self._recent: dict[str, bytes] = {}  # ref -> the bytes stored under it, oldest first

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def store(self, message: OutboundMessage, voice: Voice | None = None) -> OutboundMessage:
        """Store every unstored file of `message`; the reply keeps references only. A file that
        cannot be stored becomes a notice in ``voice``'s language (the detail goes to the log)."""
        if not any(isinstance(b, File) and not b.ref for b in message.blocks):
            return message
        blocks: list[Block] = []
        for block in message.blocks:
            if isinstance(block, File) and not block.ref:
                block = replace(block, name=file_name(block.name))  # once, for every use after
                try:
                    block = await self._store_one(block)
                except _Refused as exc:
                    log.warning(
                        "reply file not attached",
                        extra={"file": block.name, "reason": exc.reason.value, "error": exc.detail},
                    )
                    block = Text(
                        _not_attached(voice or Voice(), block.name, exc, self.max_bytes), False
                    )
            blocks.append(block)
        return OutboundMessage(tuple(blocks))

    def link(self, file: File, now: float) -> str | None:
        """A signed, expiring download path for a stored file (None without a link key)."""
        if self.links is None or not file.ref:
            return None
        return self.links.path(file.ref, file.name, file.mime, now)

    def described(self, file: File, now: float) -> dict[str, object]:
        """A stored file as JSON for web clients: what it is and where to fetch it."""
        return {
            "name": file.name,
            "mime": file.mime,
            "kind": file.kind,
            "size": file.size,
            "caption": file.caption,
            "url": self.link(file, now),
        }

    def path_of(self, ref: str) -> Path:
        if not _REF.match(ref):
            raise FileMissing(f"not a file reference: {ref[:40]!r}")
        return self.root / ref

    async def read(self, ref: str) -> bytes:
        path = self.path_of(ref)
        recent = self._recent.pop(ref, None)
        if recent is not None and path.exists():  # still stored: what was written is this
            return recent
        try:
            return await asyncio.to_thread(path.read_bytes)
        except FileNotFoundError:
            raise FileMissing(f"file {ref} is no longer stored") from None

    def _keep_recent(self, ref: str, data: bytes) -> None:
        if len(data) > RECENT_BYTES:
            return
        self._recent[ref] = data
        total = sum(len(kept) for kept in self._recent.values())
        while total > RECENT_BYTES:
            total -= len(self._recent.pop(next(iter(self._recent))))

    async def discard(self, message: OutboundMessage | None) -> None:
        """Remove the files of a message whose delivery ended (sent, or dropped from the DLQ)."""
        await self.discard_refs(refs_of(message) if message is not None else [])

    async def discard_refs(self, refs: list[str]) -> None:
        for ref in refs:
            self._recent.pop(ref, None)
        paths = [self.root / r for r in refs if _REF.match(r)]
        if paths:
            await asyncio.to_thread(self._unlink, paths)

    async def sweep(self, older_than_s: float, now: float, keep: set[str]) -> int:
        """Remove files older than `older_than_s` that no open entry references (`keep`)."""
        self._recent.clear()  # a file never delivered by now is read from disk, if kept
        return await asyncio.to_thread(self._sweep, older_than_s, now, keep)

    # -- internals ----------------------------------------------------------------------------

    async def _store_one(self, file: File) -> File:
        if file.url and file.data is None and not file.path:
            return await self._store_url(file)
        if file.data is not None:
            data = file.data
        else:
            data = await asyncio.to_thread(self._read_path, file.path)
        self._check_size(len(data))
        ref = secrets.token_hex(16)
        await asyncio.to_thread(self._write, ref, data)
        self._keep_recent(ref, data)
        return self._stored(file, ref, len(data), data)

    def _check_size(self, size: int) -> None:
        if size > self.max_bytes:
            raise _Refused(
                StoreRefusal.TOO_LARGE,
                f"it is {human_size(size)}, over the {human_size(self.max_bytes)} limit",
            )

    @staticmethod
    def _stored(file: File, ref: str, size: int, head: bytes) -> File:
        mime = file.mime
        if mime in _GENERIC:
            import filetype  # on the first file without a type, not at start

            mime = filetype.guess_mime(head[:_SNIFF_BYTES]) or "application/octet-stream"
        return replace(file, ref=ref, size=size, mime=mime, data=None, path="", url="")

    def _read_path(self, path: str) -> bytes:
        try:
            with open(path, "rb") as fh:
                data = fh.read(self.max_bytes + 1)
        except OSError as exc:
            raise _Refused(StoreRefusal.UNREADABLE, exc.strerror or "unreadable") from None
        return data

    async def _store_url(self, file: File) -> File:
        """Stream the URL's body into the store; the cap holds across chunks, so a body over it
        is refused whole (never kept cut short)."""
        url = file.url
        if not url.startswith(("http://", "https://")):
            raise _Refused(StoreRefusal.FETCH_FAILED, "only http(s) URLs can be fetched")
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=FETCH_TIMEOUT_S))
        ref = secrets.token_hex(16)
        tmp = await asyncio.to_thread(self._open_tmp, ref)
        try:
            size, head = await self._download(url, tmp)
            await asyncio.to_thread(self._commit, tmp, ref)
        except BaseException:
            await asyncio.to_thread(self._abandon, tmp)
            raise
        return self._stored(file, ref, size, head)

    async def _download(self, url: str, tmp: BinaryIO) -> tuple[int, bytes]:
        assert self._http is not None
        size, head, pending = 0, b"", bytearray()
        try:
            async with self._http.get(url) as resp:
                if resp.status >= 400:
                    raise _Refused(
                        StoreRefusal.FETCH_FAILED, f"the URL answered HTTP {resp.status}"
                    )
                if resp.content_length is not None:
                    self._check_size(resp.content_length)
                async for chunk in resp.content.iter_chunked(_CHUNK):
                    size += len(chunk)
                    self._check_size(size)
                    if len(head) < _SNIFF_BYTES:
                        head += chunk[: _SNIFF_BYTES - len(head)]
                    pending += chunk
                    if len(pending) >= _FLUSH_BYTES:
                        await asyncio.to_thread(tmp.write, bytes(pending))
                        pending.clear()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _Refused(
                StoreRefusal.FETCH_FAILED, f"fetching it failed ({type(exc).__name__})"
            ) from None
        if pending:
            await asyncio.to_thread(tmp.write, bytes(pending))
        return size, head

    def _open_tmp(self, ref: str) -> BinaryIO:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        return open(self.root / f".{ref}.tmp", "wb")

    def _commit(self, tmp: BinaryIO, ref: str) -> None:
        with tmp:
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp.name, self.root / ref)

    @staticmethod
    def _abandon(tmp: BinaryIO) -> None:
        tmp.close()
        Path(tmp.name).unlink(missing_ok=True)

    def _write(self, ref: str, data: bytes) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.root / f".{ref}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.root / ref)

    @staticmethod
    def _unlink(paths: list[Path]) -> None:
        for path in paths:
            path.unlink(missing_ok=True)

    def _sweep(self, older_than_s: float, now: float, keep: set[str]) -> int:
        if not self.root.is_dir():
            return 0
        removed = 0
        for path in self.root.iterdir():
            if path.name in keep:
                continue
            try:
                if now - path.stat().st_mtime > older_than_s:
                    path.unlink(missing_ok=True)
                    removed += 1
            except OSError:
                continue
        return removed


async def sweep_forever(
    files: OutgoingFiles, dead_letters: DeadLetterStore, clock: Clock, every_s: float = 600.0
) -> None:
    """Remove stored files no one can fetch any more: older than a download link lives (plus an
    hour) and not kept by a DLQ entry awaiting replay."""
    keep_s = (files.links.ttl_s if files.links is not None else 0.0) + 3600.0
    while True:
        await clock.sleep(every_s)
        try:
            keep = {
                ref for entry in await dead_letters.list(DLQ_SCAN) for ref in refs_in(entry.message)
            }
            removed = await files.sweep(keep_s, clock.time(), keep)
        except Exception:  # the store is down: the next round tries again
            log.warning("outgoing-file sweep failed", exc_info=True)
            continue
        if removed:
            log.info("outgoing files removed", extra={"count": removed})


def refs_in(data: Mapping[str, Any]) -> list[str]:
    """References in a stored (dict) reply, without decoding the rest of it."""
    blocks = data.get("blocks")
    if not isinstance(blocks, list):
        return []
    return [
        str(b["ref"])
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "file" and isinstance(b.get("ref"), str)
    ]
