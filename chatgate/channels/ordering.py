"""Per-chat ordering for SDKs that run each platform event in its own task.

Messages of one chat are handed to the sink in the order they arrived (asyncio locks are FIFO);
different chats proceed in parallel. Locks exist only while a chat has events in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class ChatOrder:
    def __init__(self) -> None:
        self._chats: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def turn(self, chat: str) -> AsyncIterator[None]:
        lock, users = self._chats.get(chat) or (asyncio.Lock(), 0)
        self._chats[chat] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._chats[chat]
            if users <= 1:
                del self._chats[chat]
            else:
                self._chats[chat] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._chats)
