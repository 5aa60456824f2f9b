"""A turn's answer in the journal and its lines in the transcript, and the spill file when the
session store fails."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from pathlib import Path

from chatgate.gateway.events import EventName
from chatgate.gateway.runtime import Runtime
from chatgate.gateway.session_cache import WarmSession
from chatgate.model.chat import ChatMessage
from chatgate.state.personal import spill_file
from chatgate.state.protocols import TranscriptAppend
from chatgate.state.records import JournalMark

log = logging.getLogger("chatgate.turn")


class TurnPersistence:
    """Writes turns to the journal and transcripts to the session store; spills on failure."""

    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    async def write(
        self,
        keys: Sequence[str],
        mark: JournalMark,
        session: WarmSession,
        messages: Sequence[ChatMessage],
    ) -> None:
        """``mark`` on every key and the transcript lines in one write where the backend can
        (one round trip and one commit per turn); otherwise side by side."""
        journal = self.rt.journal
        writer = journal.turn_writer()
        if writer is None:
            writes = [journal.settle(key, mark) for key in keys]
            if messages or session.unflushed:
                writes.append(self.append(session, messages))
            # every write finishes before a failure propagates: the session is in its final
            # state then (the transcript lines held unflushed), whatever the order
            for result in await asyncio.gather(*writes, return_exceptions=True):
                if isinstance(result, BaseException):
                    raise result
            return
        pending = [*session.unflushed, *messages]
        transcript = TranscriptAppend(session.key, session.epoch, pending) if pending else None
        failed = await writer.settle_turn(keys, mark, transcript)
        if failed is None:
            session.unflushed.clear()
        else:
            await self._failed(session, messages, failed)
        self.rt.cache.extend(session, messages)

    async def append(self, session: WarmSession, messages: Sequence[ChatMessage]) -> None:
        """Append to the store; on failure spill to a file, keep the session unflushed, raise an event."""
        runtime = self.rt
        pending = [*session.unflushed, *messages]
        if not pending:
            return
        try:
            await runtime.cache.store.append(
                session.key, session.epoch, pending, runtime.clock.time()
            )
            session.unflushed.clear()
        except Exception as exc:
            await self._failed(session, messages, exc)
        runtime.cache.extend(session, messages)

    async def _failed(
        self, session: WarmSession, messages: Sequence[ChatMessage], exc: BaseException
    ) -> None:
        runtime = self.rt
        path = await asyncio.to_thread(
            spill, runtime.state_dir, session, messages, runtime.clock.time(), exc
        )
        session.unflushed.extend(messages)
        runtime.metrics.persist_failed.inc()
        log.error(
            "session write failed; turn spilled to file",
            extra={
                "session": session.key,
                "spill": str(path) if path else None,
                "error": type(exc).__name__,
            },
        )
        runtime.events.emit(
            EventName.SESSION_PERSIST_FAILED,
            runtime.clock.time(),
            session=session.key,
            error=type(exc).__name__,
            spilled=path is not None,
            spill_path=str(path) if path else None,
        )


def spill(
    state_dir: Path,
    session: WarmSession,
    messages: Sequence[ChatMessage],
    now: float,
    exc: BaseException,
) -> Path | None:
    """Append the lines the store refused to ``spill/transcripts.jsonl`` (runs in a thread)."""
    try:
        path = spill_file(state_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "at": now,
            "session": session.key,
            "epoch": session.epoch,
            "error": type(exc).__name__,
            "messages": [m.to_dict() for m in messages],
        }
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        return path
    except OSError:
        log.exception("spill file write failed too")
        return None
