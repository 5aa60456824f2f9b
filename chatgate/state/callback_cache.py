"""Long button payloads, referenced by a short id in a platform's callback data.

Telegram allows 64 bytes of callback data; presentation swaps longer values for "ref:<id>" and
the adapter resolves the id when the button is pressed (also after a restart, or on another
replica). Backends supply only the durable write and read; the in-memory cache and the
write-behind (``put`` is sync, since presentation is pure) live here once.
"""

from __future__ import annotations

import asyncio
import hashlib
from abc import ABC, abstractmethod
from collections import OrderedDict

from chatgate.presentation.degrade import REF_PREFIX

MEMORY_ENTRIES = 10_000


class WriteBehindCallbacks(ABC):
    def __init__(self) -> None:
        self._memory: OrderedDict[str, str] = OrderedDict()
        self._pending: set[asyncio.Task[None]] = set()

    @abstractmethod
    async def _persist(self, ref: str, value: str) -> None: ...

    @abstractmethod
    async def _load(self, ref: str) -> str | None: ...

    def put(self, value: str) -> str:
        """The short id for ``value``; the durable copy is written behind."""
        ref = hashlib.blake2s(value.encode(), digest_size=9).hexdigest()
        if ref not in self._memory:
            self._memory[ref] = value
            if len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)
            task = asyncio.get_running_loop().create_task(self._persist(ref, value))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        return ref

    async def flush(self) -> None:
        """Wait for payloads still being written (shutdown)."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    async def resolve(self, data: str) -> str | None:
        """The stored value for "ref:<id>" (or a bare id), or None when unknown."""
        ref = data[len(REF_PREFIX) :] if data.startswith(REF_PREFIX) else data
        if ref in self._memory:
            return self._memory[ref]
        return await self._load(ref)
