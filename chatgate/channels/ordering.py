"""Per-chat ordering for SDKs that run each platform event in its own task.

Messages of one chat are handed to the sink in the order they arrived (asyncio locks are FIFO);
different chats proceed in parallel. Locks exist only while a chat has events in flight.
"""

from __future__ import annotations

import asyncio
from types import TracebackType


class ChatOrder:
    def __init__(self) -> None:
        self._chats: dict[str, tuple[asyncio.Lock, int]] = {}

    def turn(self, chat: str) -> _Turn:
        """``async with order.turn(chat):`` the block runs after every earlier one of ``chat``."""
        return _Turn(self, chat)

    def _leave(self, chat: str) -> None:
        lock, users = self._chats[chat]
        if users <= 1:
            del self._chats[chat]
        else:
            self._chats[chat] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._chats)


class _Turn:
    """One chat's turn as a plain async context manager (a generator-based one cost a
    generator, its helper and two extra awaits on every message)."""

    __slots__ = ("_chat", "_lock", "_order")

    def __init__(self, order: ChatOrder, chat: str) -> None:
        self._order, self._chat = order, chat

    async def __aenter__(self) -> None:
        chats, chat = self._order._chats, self._chat
        lock, users = chats.get(chat) or (asyncio.Lock(), 0)
        chats[chat] = (lock, users + 1)
        self._lock = lock
        try:
            await lock.acquire()
        except BaseException:  # cancelled while waiting: no longer in flight
            self._order._leave(chat)
            raise

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._lock.release()
        self._order._leave(self._chat)
