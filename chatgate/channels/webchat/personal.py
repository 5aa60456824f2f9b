"""What a web chat channel keeps about one browser session (the person ``webchat:<sid>``): its
outbox of shown messages and its uploads, for `chatgate people` show, export and erase."""

from __future__ import annotations

from typing import Protocol

from chatgate.channels.webchat.outbox import MessageLog
from chatgate.channels.webchat.uploads import UploadStore
from chatgate.state.personal import Erased, Footprint, Found


class WebChatStores(Protocol):
    """The adapter's stores as they are now (a restart replaces them)."""

    @property
    def name(self) -> str: ...

    @property
    def outbox(self) -> MessageLog | None: ...

    @property
    def uploads(self) -> UploadStore | None: ...


class WebChatData:
    def __init__(self, adapter: WebChatStores) -> None:
        self.adapter = adapter
        self.name = f"{adapter.name}_outbox"

    def _sid(self, footprint: Footprint) -> str | None:
        person = footprint.person
        return person.user if person.channel == self.adapter.name else None

    async def collect(self, footprint: Footprint) -> Found:
        sid, outbox, uploads = self._sid(footprint), self.adapter.outbox, self.adapter.uploads
        if sid is None:
            return Found(self.name)
        records = [e.to_json() for e in await outbox.since(sid, 0)] if outbox else []
        files = await uploads.of_session(sid) if uploads else []
        return Found(self.name, tuple(records), tuple(files))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        sid, outbox, uploads = self._sid(footprint), self.adapter.outbox, self.adapter.uploads
        if sid is None:
            return Erased(self.name)
        removed = await outbox.forget(sid) if outbox else 0
        removed += await uploads.forget(sid) if uploads else 0
        return Erased(self.name, removed=removed)
