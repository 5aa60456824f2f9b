"""Two `chatgate run` replicas of one Matrix bot on one Redis, against the real Synapse: replica A
holds the channel lease and is killed; replica B takes the lease over, resumes from the sync token
A stored (nothing lost, nothing answered twice) and decrypts with the crypto store A kept in
Redis."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.channels.matrix.support import Person, matrix_config
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.harness import over_http
from tests.redis.conftest import redis_db  # noqa: F401  (the fixture)
from tests.redis.replicas_support import redis_lines
from tests.support.synapse import MatrixUser, Synapse

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 3.0


def _replica(
    tmp_path: Path,
    name: str,
    url: str,
    synapse: Synapse,
    bot: MatrixUser,
    carol: Person,
    llm: FakeLLM,
) -> Path:
    channel = f'    dm_policy: allowlist\n    allowed_users: ["{carol.user_id}"]\n    e2ee: true'
    gateway = redis_lines(url, name, LEASE_TTL_S)
    return matrix_config(tmp_path / name, synapse, bot, llm, channel=channel, gateway=gateway)


async def _holder(url: str) -> str | None:
    """The replica holding the Matrix channel lease."""
    client = Redis.from_url(url)
    try:
        keys = await client.keys("*lease:matrix:*")
        value = await client.get(keys[0]) if keys else None
    finally:
        await client.aclose()
    return value.decode() if isinstance(value, bytes) else value


async def test_a_takeover_resumes_from_the_stored_token_and_decrypts(
    tmp_path: Path,
    synapse: Synapse,
    bot: MatrixUser,
    carol: Person,
    fake_llm: FakeLLM,
    redis_db: str,  # noqa: F811
) -> None:
    a = await Daemon(
        _replica(tmp_path, "a", redis_db, synapse, bot, carol, over_http(fake_llm))
    ).start(60)
    b = Daemon(_replica(tmp_path, "b", redis_db, synapse, bot, carol, over_http(fake_llm)))
    try:
        room = await carol.dm(bot.user_id, encrypted=True)
        await carol.wait_joined(room, bot.user_id, timeout=40)
        await carol.send(room, "one")
        await carol.answers(bot.user_id, room, timeout=40)
        assert await _holder(redis_db) == "a"
        await b.start(60)  # standby while A holds the lease
    finally:
        a.kill9()
        await a.wait()
    try:
        await carol.send(room, "two")  # same room key: B needs A's keys to read it
        await carol.answers(bot.user_id, room, count=2, timeout=60)
        assert await _holder(redis_db) == "b"
        await asyncio.sleep(1.5)  # room for a duplicate to show up
    finally:
        assert await b.terminate() == 0  # the default bound: a loaded box drains slowly
    answers = carol.messages_from(bot.user_id, room)
    assert [a["content"]["body"] for a in answers] == ["echo: one", "echo: two"]
    assert all(a.get("was_encrypted") for a in answers)  # B answered encrypted too
    assert [r.last_user_text for r in fake_llm.requests] == ["one", "two"]  # B read plaintext
    assert "undecryptable" not in b.logs()
