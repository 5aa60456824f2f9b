"""The `/sync` long poll, driven by our own loop so `next_batch` is stored only after the events
it covers are journaled: a restart or kill -9 fetches them again and the journal's dedupe keeps
each answered once. The token lives in the state store (Redis in replica mode), so the next
holder of the channel lease resumes where the last one stopped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from mautrix import errors as mx
from mautrix.client import Client
from mautrix.types import FilterID, PresenceState, SyncToken

from chatgate.channels.matrix import errors
from chatgate.channels.matrix.client import RateNotes
from chatgate.model.errors import StateUnavailable
from chatgate.model.reasons import SendErrorKind
from chatgate.policies.lease_timing import poll_budget_s

log = logging.getLogger("chatgate.matrix")
HandleBatch = Callable[[dict[str, Any]], Awaitable[None]]
LEASE_WAIT_S = 0.2
MAX_BACKOFF_S = 30.0
# Nothing the channel reads comes as presence or room ephemeral events (typing, receipts): the
# homeserver leaves them out, so a busy room costs neither it nor the bot their stream.
SYNC_FILTER = FilterID(
    json.dumps({"presence": {"not_types": ["*"]}, "room": {"ephemeral": {"not_types": ["*"]}}})
)


class TokenStore(Protocol):
    async def load(self) -> str | None: ...

    async def save(self, token: str) -> None: ...


class FileTokens:
    """The token in a file of the state dir, replaced atomically (one process per state dir)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def load(self) -> str | None:
        return await asyncio.to_thread(self._read)

    def _read(self) -> str | None:
        try:
            return self.path.read_text().strip() or None
        except FileNotFoundError:
            return None

    async def save(self, token: str) -> None:
        await asyncio.to_thread(self._write, token)

    def _write(self, token: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with tmp.open("w") as fh:
            fh.write(token)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)


class RedisTokens:
    """The token in Redis, so whichever replica holds the channel lease resumes from it."""

    def __init__(self, client: Any, key: str) -> None:
        self.client, self.key = client, key

    async def load(self) -> str | None:
        try:
            value = await self.client.get(self.key)
        except Exception as exc:
            raise StateUnavailable(f"matrix sync token: {type(exc).__name__}") from None
        return value.decode() if isinstance(value, bytes) else value

    async def save(self, token: str) -> None:
        try:
            await self.client.set(self.key, token)
        except Exception as exc:
            raise StateUnavailable(f"matrix sync token: {type(exc).__name__}") from None


class SyncLoop:
    """Long-polls `/sync`, hands each response to `handle`, then stores its `next_batch`."""

    def __init__(
        self,
        client: Client,
        tokens: TokenStore,
        handle: HandleBatch,
        on_fatal: Callable[[BaseException], None],
        notes: RateNotes,
        *,
        timeout_s: float,
        lease_left: Callable[[], float | None] = lambda: None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.client, self.tokens, self.handle = client, tokens, handle
        self.on_fatal, self.notes, self.timeout_s = on_fatal, notes, timeout_s
        self.lease_left, self.sleep = lease_left, sleep
        self.since: str | None = None
        self.last_ok = time.monotonic()
        self.last_event_ts = 0.0
        self.errors = 0
        self.last_error: str | None = None
        self.initial = True  # no token stored yet: the first sync reads history
        self._rng = random.Random()

    async def prime(self) -> None:
        self.since = await self.tokens.load()
        self.initial = self.since is None

    async def run(self) -> None:
        backoff = 1.0
        while True:
            budget = poll_budget_s(self.lease_left(), self.timeout_s)
            if budget is None:
                await self.sleep(LEASE_WAIT_S)
                continue
            try:
                data = await self.client.sync(
                    since=SyncToken(self.since) if self.since else None,
                    timeout=int(budget * 1000),
                    filter_id=SYNC_FILTER,
                    set_presence=PresenceState.OFFLINE,
                )
            except (mx.MatrixInvalidToken, mx.MUserDeactivated) as exc:
                self.on_fatal(errors.fatal(exc))
                return
            except Exception as exc:
                if isinstance(exc, asyncio.CancelledError):
                    raise
                backoff = await self._failed(exc, backoff)
                continue
            backoff = 1.0
            self.last_ok = time.monotonic()
            if not await self._enqueue(data):
                continue
            token = str(data.get("next_batch") or "")
            if token:
                await self._save(token)

    async def _failed(self, exc: BaseException, backoff: float) -> float:
        """Waits as the server asked (429) or with jittered backoff; returns the next backoff."""
        self.errors += 1
        self.last_error = errors.describe(exc)
        wait = self.notes.take() if errors.kind_of(exc) is SendErrorKind.RATE_LIMITED else None
        if wait is None:
            wait = backoff * (0.8 + 0.4 * self._rng.random())
            backoff = min(backoff * 2, MAX_BACKOFF_S)
        log.warning("sync failed (%s); retrying in %.1f s", self.last_error, wait)
        await self.sleep(wait)
        return backoff

    async def _enqueue(self, data: dict[str, Any]) -> bool:
        """Whether the batch was journaled; if not, it is fetched again after a pause."""
        try:
            await self.handle(data)
        except StateUnavailable as exc:
            log.warning("state not writable (%s); the sync batch is fetched again", exc)
            await self.sleep(1.0 + self._rng.random())
            return False
        except Exception:
            log.exception("could not hand a sync batch to the gateway; it is fetched again")
            await self.sleep(1.0)
            return False
        self.initial = False
        return True

    async def _save(self, token: str) -> None:
        while True:
            try:
                await self.tokens.save(token)
            except StateUnavailable as exc:
                log.warning("could not store the sync token (%s); retrying", exc)
                await self.sleep(1.0)
                continue
            self.since = token
            return
