"""Long polling driven by our own loop so an update is confirmed only after it is journaled.

Telegram confirms updates when getUpdates is called with an offset past them. We advance the
offset only after every update of a batch was handed to the sink (journaled), so a crash between
fetch and journal re-fetches the batch; the journal's dedupe makes the redelivery harmless.
A watchdog rebuilds the poller when no getUpdates succeeded for `stale_after_s` ("connected but deaf").
Under a replica lease each long poll ends while the lease is still held, so a replica that
stalls past its lease never has a poll open at Telegram beside the next holder's (409).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable

from chatgate.channels.base import ChannelError
from chatgate.channels.telegram.errors import retry_after_seconds
from chatgate.channels.telegram.inbound import ALLOWED_UPDATES
from chatgate.model.errors import StateUnavailable
from chatgate.model.reasons import SendErrorKind
from chatgate.policies.lease_timing import poll_budget_s
from telegram import Bot, Update
from telegram import error as tg

log = logging.getLogger("chatgate.telegram")
HandleBatch = Callable[[tuple[Update, ...]], Awaitable[None]]

REJECTED_TOKEN = "Telegram rejected the bot token (401 Unauthorized)"
TOKEN_HINT = (
    "the bot token was rejected (revoked?): get a new one from @BotFather and update "
    "channels.telegram.token"
)
CONFLICT_HINT = (
    "another process is polling this bot token (a second chatgate, another bot framework, or a leftover "
    "deployment): stop it, or switch one of them to mode: webhook"
)


LEASE_WAIT_S = 0.2  # too little lease left to poll: look again after this


def poll_timeout(configured: int, lease_left: float | None) -> int | None:
    """getUpdates' long-poll timeout: the configured one, cut so the request ends while this
    replica still holds the polling lease; None when too little is left to poll at all."""
    budget = poll_budget_s(lease_left, configured)
    return None if budget is None else int(budget)


class Poller:
    def __init__(
        self,
        make_bot: Callable[[], Bot],
        handle: HandleBatch,
        on_fatal: Callable[[BaseException], None],
        count: Callable[[str], None],
        *,
        poll_timeout_s: int,
        stale_after_s: float,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        lease_left: Callable[[], float | None] = lambda: None,
    ) -> None:
        self._lease_left = lease_left
        self._make_bot = make_bot
        self._sleep = sleep
        self._handle = handle
        self._on_fatal = on_fatal
        self._count = count
        self.poll_timeout_s = poll_timeout_s
        self.stale_after_s = stale_after_s
        self.offset: int | None = None
        self.last_ok = time.monotonic()
        self.last_success = time.monotonic()  # not reset by rebuilds: what stall detection reads
        self.rebuilds = 0
        self.errors = 0
        self._refused_backoff = 1.0  # a batch the gateway could not journal is retried after this
        self._bot: Bot | None = None
        self._task: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._rng = random.Random()

    def start(self) -> None:
        self.last_ok = time.monotonic()
        self._spawn()
        self._watchdog = asyncio.create_task(self._watch(), name="telegram-poll-watchdog")

    async def stop(self) -> None:
        for task in (self._watchdog, self._task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._watchdog = self._task = None
        await self._close_bot()

    def _spawn(self) -> None:
        self._bot = self._make_bot()
        self._task = asyncio.create_task(self._loop(self._bot), name="telegram-poll")

    async def _close_bot(self) -> None:
        if self._bot is not None:
            with contextlib.suppress(Exception):
                await self._bot.shutdown()
            with contextlib.suppress(Exception):
                # never initialised (no getMe), so Bot.shutdown() left its request open
                await self._bot.request.shutdown()
            self._bot = None

    async def _watch(self) -> None:
        interval = max(0.2, min(5.0, self.stale_after_s / 4))
        while True:
            await asyncio.sleep(interval)
            if time.monotonic() - self.last_ok <= self.stale_after_s:
                continue
            log.warning(
                "no successful getUpdates for %.0f s; rebuilding the poller", self.stale_after_s
            )
            self.rebuilds += 1
            self._count("telegram_poller_rebuilt")
            if self._task is not None:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._task
            await self._close_bot()
            self.last_ok = time.monotonic()
            self._spawn()

    async def _loop(self, bot: Bot) -> None:
        backoff = 1.0
        while True:
            timeout = poll_timeout(self.poll_timeout_s, self._lease_left())
            if timeout is None:  # the lease is being renewed (or let go): do not poll now
                await self._sleep(LEASE_WAIT_S)
                continue
            try:
                updates = await bot.get_updates(
                    offset=self.offset,
                    timeout=timeout,
                    allowed_updates=list(ALLOWED_UPDATES),
                )
            except tg.InvalidToken:  # its message quotes the token: never pass it on
                self._on_fatal(
                    ChannelError(REJECTED_TOKEN, kind=SendErrorKind.AUTH_FATAL, hint=TOKEN_HINT)
                )
                return
            except tg.Conflict as exc:
                self._on_fatal(
                    ChannelError(f"409 Conflict: {exc.message}", conflict=True, hint=CONFLICT_HINT)
                )
                return
            except tg.RetryAfter as exc:
                await asyncio.sleep(retry_after_seconds(exc))
                continue
            except (tg.NetworkError, OSError) as exc:
                self.errors += 1
                self._count("telegram_poll_errors")
                delay = backoff * (0.8 + 0.4 * self._rng.random())
                log.warning("getUpdates failed (%s); retrying in %.1f s", type(exc).__name__, delay)
                await asyncio.sleep(delay)
                backoff = min(backoff * 2, 30.0)
                continue
            backoff = 1.0
            self.last_ok = self.last_success = time.monotonic()
            if not updates:
                continue
            try:
                await self._handle(updates)
            except StateUnavailable as exc:  # not journaled: keep the offset, fetch it again
                self._count("telegram_batch_refused")
                delay = self._refused_backoff * (0.8 + 0.4 * self._rng.random())
                log.warning(
                    "state not writable (%s); the batch is not confirmed, retrying in %.1f s",
                    exc,
                    delay,
                )
                await self._sleep(delay)
                self._refused_backoff = min(self._refused_backoff * 2, 30.0)
                continue
            except Exception:  # not journaled: keep the offset so the batch is fetched again
                log.exception(
                    "could not hand a Telegram batch to the gateway; it will be re-fetched"
                )
                await asyncio.sleep(1.0)
                continue
            self._refused_backoff = 1.0
            self.offset = updates[-1].update_id + 1
