"""Live fan-out to the open event streams of each browser session, and the stream handler.

A stream first replays what the browser missed from the outbox (everything after the sequence
number it names in `Last-Event-ID` or `?after=`), then forwards live changes. It subscribes
before it replays and skips what the replay already carried, so nothing falls in between. A
browser too slow to keep up is disconnected; it reconnects and replays from the outbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from aiohttp import web

from chatgate.channels.http_ingress import refuse
from chatgate.channels.webchat.outbox import Entry, MessageLog
from chatgate.channels.webui import SseStream, json_answer
from chatgate.http_input import BadInput, bounded_int

log = logging.getLogger("chatgate.webchat")
HEARTBEAT_S = 15.0
GONE_CHECK_S = 0.5  # how soon a stream whose browser went away gives its slot back
MAX_PENDING = 500  # events queued for one stream before it is cut off
MAX_STREAMS_PER_SESSION = 8
_CLOSE = None
Item = tuple[str, Any] | None


class Hub:
    def __init__(self, max_streams: int) -> None:
        self.max_streams = max_streams
        self._subs: dict[str, set[asyncio.Queue[Item]]] = {}

    @property
    def streams(self) -> int:
        return sum(len(queues) for queues in self._subs.values())

    @property
    def sessions(self) -> int:
        return len(self._subs)

    def subscribe(self, sid: str) -> asyncio.Queue[Item] | None:
        """A queue of ``sid``'s live events, or None when too many streams are open."""
        mine = self._subs.get(sid, set())
        if self.streams >= self.max_streams or len(mine) >= MAX_STREAMS_PER_SESSION:
            return None
        queue: asyncio.Queue[Item] = asyncio.Queue()
        self._subs.setdefault(sid, set()).add(queue)
        return queue

    def unsubscribe(self, sid: str, queue: asyncio.Queue[Item]) -> None:
        queues = self._subs.get(sid)
        if queues is not None:
            queues.discard(queue)
            if not queues:
                del self._subs[sid]

    def _push(self, sid: str, item: Item) -> None:
        for queue in self._subs.get(sid, ()):
            if queue.qsize() >= MAX_PENDING:
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(_CLOSE)
            else:
                queue.put_nowait(item)

    def publish(self, entry: Entry) -> None:
        self._push(entry.sid, ("message", entry))

    def typing(self, sid: str, ttl_s: float) -> None:
        self._push(sid, ("typing", {"ttl_s": ttl_s}))

    def close_all(self) -> None:
        for queues in self._subs.values():
            for queue in queues:
                queue.put_nowait(_CLOSE)


def resume_point(request: web.Request) -> int:
    """The last sequence number the browser saw (0: it saw nothing yet, or named no number of
    ASCII digits that fits a sequence number)."""
    given = request.headers.get("Last-Event-ID") or request.query.get("after") or "0"
    try:
        return bounded_int(given, "Last-Event-ID")
    except BadInput:
        return 0


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def serve_events(
    request: web.Request, sid: str, outbox: MessageLog, hub: Hub
) -> web.StreamResponse:
    sent = resume_point(request)
    queue = hub.subscribe(sid)
    if queue is None:
        return json_answer({"error": "too many open streams; retry later"}, 503)
    stream: SseStream | None = None
    try:
        try:
            missed = await outbox.since(sid, sent)  # after subscribing: nothing falls between
        except RuntimeError:  # the shared store is unreachable; the page retries
            return refuse("web chat history unavailable; retrying")
        stream = await SseStream.open(request)
        for entry in missed:
            await stream.send("message", entry.to_json(), event_id=str(entry.seq))
            sent = max(sent, entry.seq)
        await stream.send("ready", {"seq": sent})
        quiet_s = 0.0
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), GONE_CHECK_S)
            except TimeoutError:
                if _gone(request):  # free the slot now, not at the next heartbeat's failure
                    break
                quiet_s += GONE_CHECK_S
                if quiet_s >= HEARTBEAT_S:
                    quiet_s = 0.0
                    await stream.heartbeat()
                continue
            if item is _CLOSE:
                break
            kind, data = item
            if isinstance(data, Entry):
                if data.seq <= sent:
                    continue  # the replay carried it
                sent = data.seq
                await stream.send(kind, data.to_json(), event_id=str(data.seq))
            else:
                await stream.send(kind, data)
    except ConnectionError:
        log.debug("web chat stream closed by the browser")
    finally:
        hub.unsubscribe(sid, queue)
    if stream is not None:
        with contextlib.suppress(ConnectionError):
            await stream.response.write_eof()
        return stream.response
    return json_answer({"error": "stream failed"}, 500)  # pragma: no cover - prepare() raised
