"""The Megolm replay index (one row per decrypted message) stays bounded over a long run, in the
SQLite crypto store and the Redis one: old indices are pruned by age and by count, and an
unknown index older than the oldest still kept (perhaps a pruned one replayed) is refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mautrix.crypto.store import CryptoStore
from mautrix.types import EventID, IdentityKey, SessionID
from redis.asyncio import Redis

from chatgate.channels.matrix import crypto, replay
from tests.redis.conftest import redis_db

__all__ = ["redis_db"]

SENDER, SESSION = IdentityKey("curve-key-of-alice"), SessionID("megolm-session-1")
MESSAGES = 2_000
STEP_MS = 1_000  # one message a second
KEPT, EVERY, MAX_AGE_MS = 300, 50, 200 * STEP_MS


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """None for the SQLite store, else the URL of a claimed Redis test db."""
    monkeypatch.setattr(replay, "KEPT", KEPT, raising=False)
    monkeypatch.setattr(replay, "PRUNE_EVERY", EVERY, raising=False)
    monkeypatch.setattr(replay, "MAX_AGE_MS", MAX_AGE_MS, raising=False)
    if request.param == "redis":
        return str(request.getfixturevalue("redis_db"))
    return None


@pytest.fixture
async def place(backend: str | None, tmp_path: Path) -> AsyncIterator[crypto.Place]:
    if backend is None:
        yield crypto.Place(tmp_path / "keys")
        return
    client = Redis.from_url(backend)
    try:
        yield crypto.Place(tmp_path / "keys", client, "chatgate:matrix:crypto")
    finally:
        await client.aclose()


async def rows(place: crypto.Place) -> int:
    if place.redis is not None:
        return int(await place.redis.hlen(f"{place.prefix}:index"))
    store, stop = await crypto._open(place, "@bot:example.org")
    try:
        return int(await store.db.fetchval("SELECT COUNT(*) FROM crypto_message_index"))  # type: ignore[attr-defined]
    finally:
        await stop()


async def check(store: CryptoStore, index: int, event: str, at: int) -> bool:
    return await store.validate_message_index(SENDER, SESSION, EventID(event), index, at)


async def test_the_index_stays_bounded_and_a_pruned_one_is_not_taken_again(
    place: crypto.Place,
) -> None:
    store, stop = await crypto._open(place, "@bot:example.org")
    try:
        for i in range(MESSAGES):
            assert await check(store, i, f"$e{i}", i * STEP_MS)
        newest = (MESSAGES - 1) * STEP_MS
        assert await check(store, MESSAGES - 1, f"$e{MESSAGES - 1}", newest)  # seen: same event
        assert not await check(store, MESSAGES - 1, "$forged", newest)  # its index, another event
        assert not await check(store, 0, "$replayed", 0)  # pruned long ago: refused
    finally:
        await stop()
    assert await rows(place) <= KEPT + EVERY
    store, stop = await crypto._open(place, "@bot:example.org")  # the next start
    try:
        assert not await check(store, 5, "$replayed-after-restart", 5 * STEP_MS)
        assert await check(store, MESSAGES, "$next", MESSAGES * STEP_MS)
        late = newest - MAX_AGE_MS // 4  # delayed over federation, still within the window
        assert await check(store, MESSAGES + 1, "$late", late)
    finally:
        await stop()
