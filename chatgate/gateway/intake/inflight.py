"""The results callers of `Pipeline.submit` wait for: one future per message in flight here, and
for a duplicate, the same future or the journal's record of how the work ended elsewhere."""

from __future__ import annotations

import asyncio

from chatgate import tracing
from chatgate.gateway.runtime import Runtime
from chatgate.model.outbound import message_from_dict
from chatgate.model.results import Stage, TurnResult, files_of
from chatgate.state.records import TERMINAL, JournalEntry

DUPLICATE_POLL_S = 0.5
DUPLICATE_WATCH_POLLS = 1200  # ten minutes


class InFlight:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self._inflight: dict[str, asyncio.Future[TurnResult]] = {}
        self._watchers: set[asyncio.Task[None]] = set()  # duplicates of work open elsewhere

    def __contains__(self, key: str) -> bool:
        return key in self._inflight

    def get(self, key: str) -> asyncio.Future[TurnResult] | None:
        return self._inflight.get(key)

    def stop_watching(self) -> None:
        for watcher in list(self._watchers):
            watcher.cancel()

    def cancel_all(self) -> None:
        for future in list(self._inflight.values()):
            future.cancel()

    def track(self, key: str) -> asyncio.Future[TurnResult]:
        future: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        future.add_done_callback(lambda _: self._inflight.pop(key, None))
        root = tracing.keyed(self.rt.owner, key)
        future.add_done_callback(lambda done: _trace_end(root, done))
        return future

    def release(self, key: str, future: asyncio.Future[TurnResult]) -> None:
        """A stage failed before the message was settled or queued: drop the in-flight mark,
        so the platform's re-delivery (or the guard's resume) runs it instead of being deduped
        against work nobody is doing. The journal keeps it open."""
        if self._inflight.get(key) is future:
            del self._inflight[key]
        if not future.done():
            future.cancel()

    def duplicate(self, key: str, entry: JournalEntry | None) -> asyncio.Future[TurnResult]:
        """The result a duplicate of ``key`` waits for: the work in flight here, the stored
        outcome, or the journal watched until the work open elsewhere ends."""
        pending = self._inflight.get(key)
        if pending is not None:
            return pending
        future: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
        if entry is None or entry.state not in TERMINAL:
            # Open in the journal but not in flight here: another replica's turn, or one this
            # process has not resumed yet. Settled when the journal shows how it ended.
            watcher = asyncio.ensure_future(self._watch(key, future))
            self._watchers.add(watcher)
            watcher.add_done_callback(self._watchers.discard)
            return future
        future.set_result(_stored_result(key, entry))
        return future

    async def _watch(self, key: str, future: asyncio.Future[TurnResult]) -> None:
        """Poll the journal for ``key``'s outcome (or this process taking it up) for a while."""
        runtime = self.rt
        watching = asyncio.current_task()
        if watching is not None:
            watching.add_done_callback(lambda t: t.cancelled() and future.cancel())
        for _ in range(DUPLICATE_WATCH_POLLS):
            await runtime.clock.sleep(DUPLICATE_POLL_S)
            if future.done():
                return
            mine = self._inflight.get(key)
            if mine is not None:
                mine.add_done_callback(lambda done: _copy(done, future))
                return
            try:
                entry = await runtime.journal.get(key)
            except Exception:
                continue
            if entry is not None and entry.state in TERMINAL:
                future.set_result(_stored_result(key, entry))
                return
        future.cancel()  # gave up: the caller answers "not finished, retry"


def _stored_result(key: str, entry: JournalEntry) -> TurnResult:
    reply = entry.reply or {}
    data = reply.get("message")
    message = message_from_dict(data) if isinstance(data, dict) else None
    text = message.plain_text if message is not None else None
    stage = entry.stage or Stage.DEDUPE.value
    return TurnResult(
        key, stage, entry.reason or "", text, entry.session, entry.delivery, files_of(message)
    )


def _trace_end(key: str, done: asyncio.Future[TurnResult]) -> None:
    """End the message's root span with how it ended (stage, reason code, delivery)."""
    if done.cancelled():
        tracing.finish_message(key, chatgate__outcome="cancelled")
    elif (error := done.exception()) is not None:
        tracing.message(key).fail(error)
        tracing.finish_message(key)
    else:
        result = done.result()
        tracing.finish_message(
            key,
            chatgate__stage=result.stage,
            chatgate__reason=result.reason,
            chatgate__delivery=result.delivery,
        )


def _copy(source: asyncio.Future[TurnResult], target: asyncio.Future[TurnResult]) -> None:
    if target.done():
        return
    if source.cancelled():
        target.cancel()
        return
    error = source.exception()
    if error is not None:
        target.set_exception(error)
    else:
        target.set_result(source.result())
