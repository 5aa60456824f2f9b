"""Temporary files of a turn's attachments under the state dir, removed when the turn ends."""

from __future__ import annotations

import asyncio
import logging
import shutil
import uuid
from pathlib import Path
from types import TracebackType

log = logging.getLogger("chatgate.media")
TMP_DIR = "media-tmp"


def media_tmp_root(state_dir: Path) -> Path:
    return state_dir / TMP_DIR


def sweep(state_dir: Path) -> int:
    """Remove every turn directory a previous process left behind (a crash mid-turn); blocking,
    run at start-up. Returns how many were removed."""
    root = media_tmp_root(state_dir)
    if not root.is_dir():
        return 0
    removed = 0
    for child in root.iterdir():
        shutil.rmtree(child, ignore_errors=True)
        removed += 1
    return removed


class TurnFiles:
    """A private directory for one turn's downloads; ``async with`` deletes it afterwards."""

    def __init__(self, state_dir: Path) -> None:
        self.dir = media_tmp_root(state_dir) / uuid.uuid4().hex
        self._count = 0

    def path_for(self, suffix: str = "") -> Path:
        self._count += 1
        safe = "".join(c for c in suffix if c.isalnum())[:8]
        return self.dir / (f"{self._count}.{safe}" if safe else str(self._count))

    async def __aenter__(self) -> TurnFiles:
        await asyncio.to_thread(self.dir.mkdir, parents=True, exist_ok=True)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(shutil.rmtree, self.dir, True)
