"""The IMAP watcher: a loop that keeps one connection, hands every new mail (by UID, oldest
first) to the adapter, and waits in IDLE between batches (restarted under the 29-minute rule;
a poll where the server has no IDLE). A dropped connection reconnects with backoff; a refused
login parks the channel.

The folder's cursor (UIDVALIDITY, last handled UID) lives in the state backend and moves past a
mail only after the adapter journaled it, so a crash re-reads it (the journal's dedupe makes
that harmless) and nothing is answered twice. The first start (or a new UIDVALIDITY) sets the
cursor at the folder's end: mail that was already there is not answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable

from chatgate.channels.base import ChannelError
from chatgate.channels.email.config import ImapConfig
from chatgate.channels.email.imap import ImapGone, ImapSession, NewMail, connect
from chatgate.channels.email.state import Cursor, MailState
from chatgate.model.errors import StateUnavailable

log = logging.getLogger("chatgate.email")
Take = Callable[[ImapSession, list[NewMail]], Awaitable[None]]
BATCH = 100  # mails fetched and journaled together (one FETCH, one STORE)
MAX_BACKOFF_S = 60.0


class Watcher:
    def __init__(
        self,
        config: ImapConfig,
        state: MailState,
        take: Take,
        on_fatal: Callable[[BaseException], None],
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.config = config
        self._state = state
        self._take = take
        self._on_fatal = on_fatal
        self._sleep = sleep
        self._task: asyncio.Task[None] | None = None
        self._rng = random.Random()
        self.session: ImapSession | None = None
        self.connects = 0
        self.errors = 0
        self.last_ok = time.monotonic()
        self._cursor: Cursor | None = None

    async def open(self) -> None:
        """Connect and set the cursor now (the channel is running once this returns: mail
        delivered after it is answered); a refused login raises ChannelError."""
        self.session = await connect(self.config)
        self.connects += 1
        try:
            self._cursor = await self._baseline(self.session)
        except BaseException:
            await self._close()
            raise

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="email-imap-watcher")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self._close()

    async def _close(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            await session.close()

    async def _run(self) -> None:
        backoff = 1.0
        while True:
            try:
                if self.session is None:
                    self.session = await connect(self.config)
                    self.connects += 1
                    self._cursor = None
                backoff = 1.0
                await self._serve(self.session)
            except ChannelError as exc:
                if exc.fatal:
                    log.error("email intake stopped: %s", exc)
                    self._on_fatal(exc)
                    return
                self._failed(exc)
            except (OSError, ImapGone, TimeoutError, StateUnavailable) as exc:
                self._failed(exc)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug must not end intake for good
                log.exception("email watcher failed")
                self._failed(exc)
            await self._close()
            delay = backoff * (0.8 + 0.4 * self._rng.random())
            log.warning("IMAP reconnect in %.1f s", delay)
            await self._sleep(delay)
            backoff = min(backoff * 2, MAX_BACKOFF_S)

    def _failed(self, exc: BaseException) -> None:
        self.errors += 1
        log.warning("IMAP connection failed", extra={"error": f"{type(exc).__name__}: {exc}"})

    async def _serve(self, session: ImapSession) -> None:
        cursor = self._cursor or await self._baseline(session)
        self._cursor = None
        while True:
            cursor = await self._drain(session, cursor)
            self.last_ok = time.monotonic()
            await session.wait_for_change(self.config.idle_renew_s, self.config.poll_interval_s)

    async def _baseline(self, session: ImapSession) -> Cursor:
        folder = self.config.folder
        stored = await self._state.cursor(folder)
        if stored is not None and stored.validity == session.validity:
            return stored
        last = session.uidnext - 1
        if last <= 0:  # no UIDNEXT given: the highest UID present
            present = await session.new_mail(0)
            last = present[-1].uid if present else 0
        cursor = Cursor(session.validity, last)
        await self._state.save_cursor(folder, cursor)
        if stored is None:
            log.info(
                "email: first start on %s; mail already there (up to UID %d) is not answered",
                folder,
                last,
            )
        else:
            log.warning(
                "email: UIDVALIDITY of %s changed (%d → %d): starting again from the folder's "
                "end; mail already there is not answered",
                folder,
                stored.validity,
                session.validity,
            )
        return cursor

    async def _drain(self, session: ImapSession, cursor: Cursor) -> Cursor:
        """Every mail above the cursor, in order; the cursor moves after each batch is taken (a
        crash inside one re-reads it: what was journaled is then a duplicate, never answered
        twice)."""
        while True:
            batch = await session.new_mail(cursor.last_uid)
            if not batch:
                return cursor
            for start in range(0, len(batch), BATCH):
                part = batch[start : start + BATCH]
                await self._take(session, part)
                cursor = Cursor(cursor.validity, part[-1].uid)
                await self._state.save_cursor(self.config.folder, cursor)
