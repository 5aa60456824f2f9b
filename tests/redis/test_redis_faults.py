"""Redis faults as the gateway sees them: an unreachable server refuses webhooks with 503 +
Retry-After (like a full disk) and answers once after recovery; a burst past the connection cap
queues instead of failing; a lease renewal stuck on a slow server stops the channel in time; an
offline CLI never shows up as (or unregisters) a live replica."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.clock import SystemClock
from chatgate.config.models import GatewaySection
from chatgate.gateway.supervision.lease import LeaseKeeper
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import InboundMessage
from chatgate.state.records import JournalMark, JournalState
from chatgate.state.redis import build_stores
from chatgate.state.redis.client import DATA_CONNECTIONS, LOCK_CONNECTIONS, Keys
from chatgate.state.redis.leases import RedisLeases
from chatgate.state.redis.lock import build_lock
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.gateway.test_webhook_e2e import gh_config, gh_headers, issue_body
from tests.harness import http, running, url
from tests.redis.conftest import PrivateRedis
from tests.redis.test_gateway_redis import on_redis
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis
NOW = 1_800_000_000.0


def gateway(redis_url: str, replica: str | None) -> GatewaySection:
    redis = {"replica_id": replica} if replica else {}
    return GatewaySection.model_validate(
        {"store": {"backend": "redis", "url": redis_url, "key_prefix": "f:"}, "redis": redis}
    )


def message(n: int) -> InboundMessage:
    return InboundMessage("tg", "telegram", f"c{n}", "direct", f"u{n}", f"m{n}", "hi")


async def test_webhook_gets_503_while_redis_is_down_and_one_answer_after(
    tmp_path: Path, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    fake_llm.script("Triage: startup crash.")
    clock = ManualClock()
    path = gh_config(tmp_path, fake_llm)
    text = path.read_text().replace(
        "\nagents:", "\n" + on_redis(private_redis.url, "a") + "agents:"
    )
    path.write_text(text)
    body = issue_body(title="Crash on start")
    headers = gh_headers(body, delivery="d-1")
    async with running(path, clock=clock) as gw, http() as client:
        private_redis.kill()
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers) as resp:
            assert resp.status == 503
            assert resp.headers["Retry-After"].isdigit()
            assert (await resp.json())["reason_code"] == "state_unavailable"
        owner = gw.pipeline.guard.current()
        assert owner is not None and "Redis is up and reachable" in gw.pipeline.guard.hint
        assert fake_llm.requests == []

        private_redis.start()
        async with asyncio.timeout(20):
            while gw.pipeline.guard.current() is not None:
                clock.advance(2.0)  # the probe's interval, on the injected clock
                await asyncio.sleep(0.02)
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers) as resp:
            assert resp.status == 200
            assert (await resp.json())["reply"] == "Triage: startup crash."
    assert len(fake_llm.requests) == 1


async def test_journal_errors_surface_as_state_unavailable(
    tmp_path: Path, private_redis: PrivateRedis
) -> None:
    stores = build_stores(gateway(private_redis.url, "r1"), tmp_path)
    await stores.open()
    private_redis.kill()
    try:
        with pytest.raises(StateUnavailable, match="journal: redis unreachable"):
            await stores.journal.record(message(1), NOW, 60)
        with pytest.raises(StateUnavailable):
            await stores.journal.settle("k", JournalMark(JournalState.DONE, NOW))
        with pytest.raises(StateUnavailable):
            await stores.journal.unfinished()
    finally:
        await stores.close()


async def test_a_burst_past_the_connection_cap_queues_instead_of_failing(
    tmp_path: Path, private_redis: PrivateRedis
) -> None:
    stores = build_stores(gateway(private_redis.url, "r1"), tmp_path)
    admin = Redis.from_url(private_redis.url)
    await stores.open()
    try:
        # Every command of the burst is in flight at once while the server holds its replies.
        await admin.client_pause(300, all=True)
        burst = 3 * DATA_CONNECTIONS
        results = await asyncio.gather(
            *(stores.journal.record(message(n), NOW, 60) for n in range(burst)),
            return_exceptions=True,
        )
        failures = [r for r in results if isinstance(r, BaseException)]
        assert not failures, f"{len(failures)} of {burst} failed, e.g. {failures[0]!r}"
        assert [r[0] for r in results if not isinstance(r, BaseException)] == [True] * burst
    finally:
        await stores.close()
        await admin.aclose()


async def test_turn_locks_of_a_burst_are_all_taken_and_all_released(
    tmp_path: Path, private_redis: PrivateRedis
) -> None:
    """A release that failed ("Too many connections") left the lock for its whole TTL, so the
    session's next turns waited that long on every replica."""
    gw = gateway(private_redis.url, "r1").model_copy()
    turn_lock = build_lock(gw, SystemClock())
    admin = Redis.from_url(private_redis.url)
    try:
        await admin.client_pause(300, all=True)
        burst = 5 * LOCK_CONNECTIONS  # past redis-py's own cap of 100 too

        async def turn(n: int) -> None:
            async with turn_lock.hold(f"s{n}", owner="o", ttl=60):
                await asyncio.sleep(0)

        results = await asyncio.gather(*(turn(n) for n in range(burst)), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        assert not failures, f"{len(failures)} of {burst} failed, e.g. {failures[0]!r}"
        assert await admin.keys("*lock:*") == [], "turn locks left behind"
    finally:
        await admin.aclose()


async def test_an_offline_cli_is_no_live_replica_and_leaves_the_daemons_key(
    tmp_path: Path, redis_db: str
) -> None:
    daemon = build_stores(gateway(redis_db, "r1"), tmp_path / "d")
    await daemon.open()
    try:
        await daemon.journal.unfinished()  # what a daemon does at start: it joins the cluster
        assert await daemon.leases.peers() == ["r1"]
        for replica in ("r1", None):  # the daemon's own config, or no replica id at all
            cli = build_stores(gateway(redis_db, replica), tmp_path / "c")
            await cli.open()
            assert await cli.leases.peers() == ["r1"], "an offline CLI listed as a replica"
            await cli.close()
            assert await daemon.leases.peers() == ["r1"], "the CLI unregistered the daemon"
    finally:
        await daemon.close()


async def test_a_lease_renewal_stuck_on_a_slow_redis_stops_the_channel_by_its_deadline(
    private_redis: PrivateRedis,
) -> None:
    """Waiting on a renewal past the lease would let another replica poll meanwhile."""
    clock = ManualClock()
    # a client that would wait a minute for the answer (the keeper must not)
    client = Redis.from_url(private_redis.url, decode_responses=True, socket_timeout=60)
    admin = Redis.from_url(private_redis.url)
    keeper = LeaseKeeper(RedisLeases(client, Keys("f:"), "a"), 9.0, clock)
    try:
        assert await keeper.leases.acquire("telegram:bot", 9.0)
        keeping = asyncio.ensure_future(keeper.keep("telegram:bot", "telegram"))
        await eventually(lambda: clock.pending() == [2.0], what="the keeper waiting to renew")
        await admin.client_pause(60_000, all=False)  # writes (the renew script) wait
        clock.advance(2.0)  # a third of the validity: the renewal is sent and hangs
        await eventually(lambda: clock.pending() == [4.0], what="the renewal's deadline")
        clock.advance(4.0)  # the validity (two thirds of the TTL) without a renewal
        await asyncio.wait_for(keeping, 10)  # keep returned: the caller stops the channel
    finally:
        await admin.client_unpause()
        await admin.aclose()
        await client.aclose()


async def test_operator_api_answers_while_redis_is_down(
    tmp_path: Path, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    """Status still answers (store parts unknown, with the reason); a store-backed action is a
    503 with Retry-After, never a 500; the dashboard's snapshot keeps coming."""
    path = gh_config(tmp_path, fake_llm)
    text = path.read_text().replace(
        "\nagents:", "\n" + on_redis(private_redis.url, "a") + "agents:"
    )
    path.write_text(text)
    async with running(path) as gw, http() as client:
        private_redis.kill()
        async with client.get(url(gw, "/api/status")) as resp:
            assert resp.status == 200
            status = await resp.json()
        assert status["dlq"]["entries"] is None and status["pairing"]["pending"] is None
        assert status["state_errors"] and all("redis" in e for e in status["state_errors"])
        for path_ in ("/api/dlq", "/api/pairing", "/api/sessions"):
            async with client.get(url(gw, path_)) as resp:
                assert resp.status == 503, path_
                assert resp.headers["Retry-After"].isdigit()
                assert (await resp.json())["reason_code"] == "state_unavailable"
        from chatgate.gateway.http.dashboard import snapshot

        data = await snapshot(gw)
        assert data["dlq"]["entries"] == [] and "redis" in data["dlq"]["error"]


async def test_the_first_lock_commands_after_a_redis_restart_find_fresh_connections(
    private_redis: PrivateRedis,
) -> None:
    """A Redis restart leaves every pooled connection closed by the server. Had the pool handed
    them out as they were, each one's first command would fail (the turn left to the journal)
    while a later message's took the lock; the pool checks a connection as it hands it out and
    dials again, so every turn's lock right after the restart is taken. A regression guard."""
    gw = gateway(private_redis.url, "r1")
    turn_lock = build_lock(gw, SystemClock())
    try:
        warm = [await turn_lock.acquire(f"s{n}", owner="o", ttl=60) for n in range(4)]
        for lease in warm:
            await turn_lock.release(lease)
        private_redis.kill()  # appendfsync always: the data is kept
        private_redis.start()
        taken = await asyncio.gather(
            *(turn_lock.acquire(f"s{n}", owner="o", ttl=60) for n in range(LOCK_CONNECTIONS))
        )
        assert len(taken) == LOCK_CONNECTIONS
    finally:
        await turn_lock.aclose()
