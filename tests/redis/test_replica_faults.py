"""Faults besides kill -9, on two real `chatgate run` replicas and a private redis-server.

Stalls: the Telegram lease holder is frozen (SIGSTOP) mid-burst while turns are at the model,
first for twice the lease TTL (shorter than the turn-lock TTL), then for longer than the
turn-lock TTL. Redis faults through a TCP proxy: the commands right after a journal write fail
(Redis errors, then a closed connection), and Redis drops while a sync webhook's turn is at the
model. Throughout: every accepted message answered, a reply repeats only if its send was under
way at a freeze (once per session at most), nothing dead-lettered, never two pollers (the fake
Bot API records overlapping getUpdates), never two turns of one session at the model at once
but for a request the frozen replica was writing as it froze. Short TTLs keep the file within
about a minute; `make soak` runs the longer stall-then-wipe variant.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from redis.asyncio import Redis

from chatgate.channels.signatures import sign
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.tcp_proxy import TcpProxy
from tests.fakes.telegram import FakeTelegram
from tests.redis.conftest import PrivateRedis
from tests.redis.replicas_support import (
    PREFIX,
    echo_replies,
    owner,
    replica_of,
    sent_texts,
    start_telegram_replicas,
    stop_all,
    warnings,
)
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 1.2
USERS, PER_USER = 6, 3
SECRET = "s3cret-for-fault-tests"
WEBHOOK = f"""  webhook:
    routes:
      jobs:
        path: /hooks/jobs
        secret: {SECRET}
        prompt: "{{payload.text}}"
        session: "{{payload.user}}"
"""


def burst(tg: FakeTelegram, tag: str) -> set[str]:
    """Every user sends PER_USER DMs; the answers the fake model will give."""
    for i in range(PER_USER):
        for user in range(1, USERS + 1):
            tg.dm(user, f"u{user} {tag}{i}")
    return {f"re: u{u} {tag}{i}" for u in range(1, USERS + 1) for i in range(PER_USER)}


async def settled(client: Redis, tg: FakeTelegram, expected: set[str]) -> None:
    """Every expected answer sent and no journal entry left open (nothing stranded)."""

    async def done() -> bool:
        return expected <= set(sent_texts(tg)) and await client.zcard(PREFIX + "journal:open") == 0

    await eventually(done, 40, f"all {len(expected)} answers and an empty open journal")


def repeated(tg: FakeTelegram) -> list[str]:
    return sorted(t for t, n in sent_texts(tg).items() if n > 1)


def fenced(daemons: dict[str, Daemon]) -> int:
    """Model requests a resumed replica did not make: its turn lock had been taken over."""
    return sum(d.logs().count("turn lock lost before a model request") for d in daemons.values())


@pytest.fixture
def figures() -> Iterator[list[str]]:
    """What a run measured, printed at the end (pytest -s shows it)."""
    lines: list[str] = []
    yield lines
    print("\n" + "\n".join(lines))


async def test_a_frozen_lease_holder_loses_no_reply_and_never_runs_two_turns_at_once(
    tmp_path: Path,
    fake_tg: FakeTelegram,
    fake_llm: FakeLLM,
    private_redis: PrivateRedis,
    figures: list[str],
) -> None:
    """First stall: 2 × lease TTL, within the turn lock's remaining life (≥ 2/3 of its TTL), so
    the frozen replica keeps its sessions' locks. Second stall: longer than the turn-lock TTL,
    so the adopter takes the locks over and re-runs the frozen replica's turns."""
    lock_ttl_s = 4.0
    stalls = (2 * LEASE_TTL_S, 4 * LEASE_TTL_S)
    assert stalls[0] < lock_ttl_s * 2 / 3 and stalls[1] > lock_ttl_s
    fake_llm.latency_s = 0.3
    echo_replies(fake_llm)
    client = Redis.from_url(private_redis.url, decode_responses=True)
    urls = dict.fromkeys(("r1", "r2"), private_redis.url)
    daemons = await start_telegram_replicas(
        tmp_path, fake_tg, fake_llm, urls, lease_ttl_s=LEASE_TTL_S, lock_ttl_s=lock_ttl_s
    )
    frozen: Daemon | None = None
    expected: set[str] = set()
    repeats_before: list[str] = []
    try:
        for n, stall_s in enumerate(stalls):
            await eventually(lambda: owner(client), 20, "a telegram owner")
            sent, calls = len(fake_tg.calls_of("sendMessage")), len(fake_llm.requests)
            expected |= burst(fake_tg, f"s{n}m")
            await fake_tg.wait_for("sendMessage", count=sent + USERS // 2, timeout=30)
            await eventually(lambda: fake_llm.in_flight > 0, 10, "turns at the model")
            first = await owner(client)  # the holder now (a slow start can move it early on)
            assert first in daemons
            frozen = daemons[first]
            assert frozen.proc is not None
            frozen.proc.send_signal(signal.SIGSTOP)
            stopped = time.monotonic()
            await asyncio.sleep(LEASE_TTL_S / 4)  # requests written before the freeze land

            async def moved(was: str | None = first) -> bool:
                return (await owner(client)) not in (None, was)

            await eventually(moved, LEASE_TTL_S * 5, "another replica polling")
            takeover_s = time.monotonic() - stopped
            await asyncio.sleep(max(0.0, stall_s - takeover_s))
            frozen.proc.send_signal(signal.SIGCONT)
            resumed = time.monotonic()
            frozen = None
            await settled(client, fake_tg, expected)
            await asyncio.sleep(LEASE_TTL_S)  # a late send from the resumed replica shows here
            log = warnings(daemons)
            assert set(sent_texts(fake_tg)) == expected, f"unexpected answers\n{log}"
            # A reply repeats only when the frozen replica's send of it was under way at the
            # freeze (sent, or past its ownership check, before its DONE mark): at most once per
            # session it had a turn in, and never more than twice.
            again = repeated(fake_tg)
            new_repeats = set(again) - set(repeats_before)
            assert all(sent_texts(fake_tg)[t] == 2 for t in again), f"{again}\n{log}"
            assert len({t.split()[1] for t in new_repeats}) == len(new_repeats) <= USERS, again
            assert await client.hgetall(PREFIX + "dlq") == {}, f"answers dead-lettered\n{log}"
            # Two requests of one session at the model at once only when a request the frozen
            # replica was writing as it froze lands on resuming (its answer is not sent); its
            # new requests are fenced (the turn lock was taken over). Within the lock's TTL none.
            overlaps = [(a, b) for a, b in fake_llm.overlaps() if b.at >= stopped]
            stale = {
                r.last_user_text
                for pair in overlaps
                for r in pair
                if replica_of(r) == first and r.at >= resumed
            }
            assert all(any(r.last_user_text in stale for r in pair) for pair in overlaps), (
                f"two turns of one session at once: {overlaps}\n{log}"
            )
            assert len(stale) <= USERS and (n == 1 or not overlaps), f"{overlaps}\n{log}"
            assert fake_tg.max_in_flight["getupdates"] == 1, "two pollers on one token"
            ratio = takeover_s / LEASE_TTL_S
            assert ratio < 2, f"takeover took {ratio:.2f} TTL"
            figures.append(
                f"stall {stall_s:.1f}s (turn lock {lock_ttl_s}s): 0 users without an answer, "
                f"replies repeated: {len(again) - len(repeats_before)}, "
                f"{len(fake_llm.requests) - calls - USERS * PER_USER} extra model calls, "
                f"takeover {ratio:.2f} TTL, "
                f"{len(overlaps)} overlapping requests of one session (a request written at the "
                f"freeze), {fenced(daemons)} model requests fenced so far"
            )
            repeats_before = again
    finally:
        if frozen is not None and frozen.proc is not None:
            frozen.proc.send_signal(signal.SIGCONT)
        await stop_all(daemons, kill=True)
        await client.aclose()


async def post(base: str, text: str, delivery: str) -> tuple[int, dict[str, str], dict[str, str]]:
    """A signed sync webhook call; its status, headers and JSON body."""
    body = json.dumps({"text": text, "user": "ada"}).encode()
    headers = {"Content-Type": "application/json", "X-Request-Id": delivery}
    headers.update(sign("generic", SECRET, body, time.time()))
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{base}/hooks/jobs", data=body, headers=headers) as r,
    ):
        return r.status, dict(r.headers), await r.json(content_type=None)


async def test_redis_errors_after_the_journal_write_and_a_drop_mid_webhook_lose_nothing(
    tmp_path: Path,
    fake_tg: FakeTelegram,
    fake_llm: FakeLLM,
    private_redis: PrivateRedis,
    figures: list[str],
) -> None:
    """The commands right after a journal write fail (Redis errors, then a closed connection):
    the intake refuses (Telegram keeps its batch), no message stays marked in flight, every one
    is answered exactly once. Then Redis drops while a sync webhook's turn is at the model: 503 +
    Retry-After (never 500), and the caller's retry gets the answer the model gave meanwhile (one
    model call in all). The model is held until Redis is gone and then answers, so the drop lasts
    only as long as the turn's failed writes take: a drop of more than half the liveness TTL
    (`lease_ttl_s`, renewed every quarter of it) can let r1's key lapse, and r2 then adopts the
    message as a dead replica's and asks the model again (the stall case, not this one)."""
    fake_llm.latency_s = 0.05
    echo_replies(fake_llm)
    client = Redis.from_url(private_redis.url, decode_responses=True)
    async with TcpProxy(private_redis.port) as proxy:
        urls = dict.fromkeys(("r1", "r2"), proxy.url())
        # liveness TTL 4 s (renewed every 1 s): r1's key lapses only if the drop below and r1's
        # lag after it last 2 s
        daemons = await start_telegram_replicas(
            tmp_path, fake_tg, fake_llm, urls, lease_ttl_s=4.0, lock_ttl_s=4.0, extra=WEBHOOK
        )
        try:
            await eventually(lambda: owner(client), 20, "a telegram owner")
            record = b"journal:sender:"  # a key only the journal's record script names
            errors = proxy.fail_after("EVALSHA", contains=record, nth=2, count=8)
            expected = burst(fake_tg, "e")
            await eventually(lambda: not errors.armed and errors.seen >= 2, 20, "the errors")
            closed = proxy.fail_after("EVALSHA", contains=record, nth=1, action="close")
            expected |= burst(fake_tg, "c")
            await eventually(lambda: bool(closed.failed), 20, "the closed connection")
            await settled(client, fake_tg, expected)
            await asyncio.sleep(1.0)  # a late duplicate shows here
            log = warnings(daemons)
            assert set(sent_texts(fake_tg)) == expected
            assert repeated(fake_tg) == [], f"repeated\n{log}"
            assert len(fake_llm.requests) == len(expected), f"a turn ran twice\n{log}"
            assert await client.hgetall(PREFIX + "dlq") == {}, f"answers dead-lettered\n{log}"
            assert fake_tg.max_in_flight["getupdates"] == 1, "two pollers on one token"
            failed = [f[0].decode() for f in errors.failed + closed.failed]
            figures.append(f"journal write then errors ({', '.join(failed)}): 0 lost, 0 repeated")
            figures.append(
                f"connections through the proxy: {proxy.accepted} for {len(expected)} turns of "
                f"2 replicas ({len(closed.failed)} closed by the fault)"
            )

            held = fake_llm.held = asyncio.Event()
            base = daemons["r1"].base
            calls = len(fake_llm.requests)
            posted = asyncio.ensure_future(post(base, "triage this", "d-1"))
            await fake_llm.wait_for_requests(calls + 1, timeout=30)  # the turn is at the model
            await proxy.refuse()
            proxy.cut()
            held.set()  # the model answers into the drop: the turn's writes fail
            status, headers, body = await posted
            assert status == 503, body
            assert headers["Retry-After"].isdigit()
            await proxy.accept()
            retries = 0
            while status != 200 and retries < 100:  # sooner than Retry-After says
                retries += 1
                status, headers, body = await post(base, "triage this", "d-1")
                if status != 200:
                    assert status == 503 and headers["Retry-After"].isdigit(), (status, body)
                    await asyncio.sleep(0.2)
            assert body["reply"] == "re: triage this"
            model_calls = len(fake_llm.requests) - calls
            log = warnings(daemons)
            assert model_calls == 1, f"the retry is answered with the answer the model gave\n{log}"
            figures.append(
                f"redis dropped mid-webhook: 503 then 200 after {retries} retries, "
                f"{model_calls} model call"
            )
        finally:
            await stop_all(daemons, kill=True)
            await client.aclose()
