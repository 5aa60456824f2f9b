"""The burst both push-style rigs run (Teams activities, WhatsApp webhooks): post ``users ×
per_user`` messages at once to the subject (at most ``concurrency`` in flight), wait, bounded,
for every reply in the fake platform's record, and measure as the Slack burst does: a reply
missing at ``within_s`` counts that as its latency, ``cpu_s`` is the subject's CPU from the
first post until it went quiet. Each rig says only how to post and how to read its record.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bench.procs import BenchError, Proc, cpu_seconds
from bench.scenarios.first_reply import first_reply
from bench.scenarios.tgrig import QUIESCE_MAX_S, SETTLE_S, Burst

Sends = Callable[[int], list[tuple[str, float]]]  # (text, arrival) of replies from index on


@dataclass(frozen=True)
class Record:
    """How a rig reads its fake platform: replies, call count, last call time, call names."""

    sends: Sends
    size: Callable[[], int]
    last_at: Callable[[], float | None]
    names: Callable[[int], Counter[str]]


class Replies:
    """Incremental scan of the record: first arrival and count per answered text."""

    def __init__(self, record: Record, prefix: str, start: int) -> None:
        self.record, self.prefix, self.index = record, prefix, start
        self.first: dict[str, float] = {}
        self.counts: Counter[str] = Counter()

    def scan(self) -> None:
        end = self.record.size()
        for text, at in self.record.sends(self.index):
            original = text.removeprefix(self.prefix)
            self.counts[original] += 1
            self.first.setdefault(original, at)
        self.index = end


async def quiesce(record: Record, quiet_s: float) -> None:
    """Wait (at most QUIESCE_MAX_S) until the subject made no call for ``quiet_s``."""
    deadline = time.monotonic() + QUIESCE_MAX_S
    while time.monotonic() < deadline:
        last = record.last_at()
        if last is None or time.monotonic() - last >= quiet_s:
            return
        await asyncio.sleep(0.1)


async def posted_first_reply(
    name: str,
    proc: Proc,
    ready_at: float,
    post: Callable[[], Awaitable[int]],
    record: Record,
    quiet_s: float,
) -> float:
    """One message posted now (``post`` answers the HTTP status; the subject became ready at
    ``ready_at``), answered end to end; seconds from ready to the reply in the record."""
    before = record.size()  # the record's calls so far: replies are read from there on

    async def send() -> None:
        status = await post()
        if status != 200:
            raise BenchError(f"{name} refused its first message: {status}")

    def replied_at() -> float | None:
        answers = record.sends(before)
        return answers[0][1] if answers else None

    seconds = await first_reply(name, ready_at, send, replied_at, [proc])
    await quiesce(record, quiet_s)
    return seconds


async def posted_burst(
    proc: Proc,
    record: Record,
    post: Callable[[str, str], Awaitable[int]],
    people: list[str],
    *,
    per_user: int,
    tag: str,
    prefix: str,
    within_s: float,
    quiet_s: float,
    concurrency: int,
) -> Burst:
    """One burst; ``post(text, user)`` answers the HTTP status the subject gave."""
    start = record.size()
    cpu_before = cpu_seconds(proc.pid)
    posts = [(f"{tag} {user} m{k}", user) for k in range(per_user) for user in people]
    pushed: dict[str, float] = {}
    gate = asyncio.Semaphore(concurrency)
    refused: list[int] = []

    async def one(text: str, user: str) -> None:
        async with gate:
            pushed[text] = time.monotonic()
            status = await post(text, user)
            if status != 200:
                refused.append(status)

    first_sent = time.monotonic()
    posting = asyncio.gather(*(one(text, user) for text, user in posts))
    deadline = first_sent + within_s
    replies = Replies(record, prefix, start)
    while time.monotonic() < deadline:
        proc.check_alive()
        replies.scan()
        if posting.done() and len(replies.first) >= len(posts):
            break
        await asyncio.sleep(0.005)
    await posting
    await asyncio.sleep(SETTLE_S)
    replies.scan()
    first = replies.first
    on_time = {t: at for t, at in first.items() if t in pushed and at <= deadline}
    missing = len(posts) - len(on_time)
    last = max(on_time.values(), default=first_sent)
    result = Burst(
        sent=len(on_time),
        wall_s=within_s if missing else last - first_sent,
        latencies_s=[at - pushed[t] for t, at in on_time.items()] + [within_s] * missing,
        missing=missing,
        duplicates=0,
        unexpected=len(refused),
    )
    await quiesce(record, quiet_s)
    result.cpu_s = cpu_seconds(proc.pid) - cpu_before
    replies.scan()
    result.late = sum(1 for t, at in first.items() if t in pushed and at > deadline)
    result.duplicates = sum(n - 1 for t, n in replies.counts.items() if t in pushed and n > 1)
    result.calls = dict(record.names(start))
    return result
