"""A real redis-server on 127.0.0.1:6379, one db number per test (1–14), flushed after.

A db is claimed before use (a key set with NX in db 15), so two test runs on one machine (two worktrees,
two xdist workers) never share one: replicas of one run would otherwise take leases and adopt
journal entries of the other.

Unreachable Redis: the test fails with a clear message under CI=true, else it is skipped with the
reason shown (pytest -rs).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError

from chatgate.state.redis.leases import FENCE_KEY
from tests.daemon import reap_leftovers
from tests.requires import missing

HOST, PORT = "127.0.0.1", 6379
FIRST_DB, DBS = 1, 14
CLAIMS_DB = 15  # the claims live apart: a test that flushes its db (a wipe) keeps its claim
CLAIM_KEY = "chatgate-tests:claim:{db}"
CLAIM_TTL_S = 900
CLAIM_WAIT_S = 300
# Let go of a claim only while it is still the releasing run's.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def db_number() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    return FIRST_DB + index % DBS


def redis_url(db: int | None = None) -> str:
    return f"redis://{HOST}:{PORT}/{db_number() if db is None else db}"


async def _claim(claims: Redis, token: str) -> int:
    """A test db no other run holds; waits while all are taken."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CLAIM_WAIT_S
    first = db_number() - FIRST_DB
    while True:
        for offset in range(DBS):
            db = FIRST_DB + (first + offset) % DBS
            if await claims.set(CLAIM_KEY.format(db=db), token, nx=True, ex=CLAIM_TTL_S):
                return db
        if loop.time() > deadline:
            pytest.fail(f"every test db {FIRST_DB}–{FIRST_DB + DBS - 1} stayed claimed")
        await asyncio.sleep(0.5)


@contextlib.asynccontextmanager
async def claimed_db() -> AsyncIterator[str]:
    """The URL of an empty test database claimed until the block ends; then the test's leftover
    daemons are killed and reaped (one left running writes into the db the next test claims)
    before the db is flushed and released. The claim is kept in a db of its own, so a test
    that wipes its db (a Redis that lost its data) still holds it."""
    claims = Redis.from_url(redis_url(CLAIMS_DB), socket_connect_timeout=1)
    try:
        await claims.ping()
    except (RedisError, OSError) as exc:
        await claims.aclose()
        missing(
            f"redis-server not reachable on {HOST}:{PORT} ({type(exc).__name__})",
            ".ci/run starts one: redis-server --daemonize yes --port 6379",
        )
    token = uuid.uuid4().hex
    try:
        db = await _claim(claims, token)
        client = Redis.from_url(redis_url(db), socket_connect_timeout=1)
        try:
            await client.flushdb()
            await client.set(FENCE_KEY, 0)  # no data loss to fence: the first replica takes at once
            yield redis_url(db)
        finally:
            await reap_leftovers()
            await client.flushdb()
            await client.aclose()
            await claims.eval(RELEASE, 1, CLAIM_KEY.format(db=db), token)
    finally:
        await claims.aclose()


@pytest.fixture
async def redis_db() -> AsyncIterator[str]:
    """The URL of an empty test database claimed for this test (see `claimed_db`)."""
    async with claimed_db() as url:
        yield url


@pytest.fixture
async def client(redis_db: str) -> AsyncIterator[Redis]:
    """A client (decoding to str) on the test's claimed database."""
    redis = Redis.from_url(redis_db, decode_responses=True)
    yield redis
    await redis.aclose()


class PrivateRedis:
    """A redis-server of the test's own (free port, append-only file in tmp), to stop and start."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise AssertionError("private redis-server did not start")

    def fence_cleared(self) -> None:
        """Tell lease takers this Redis lost nothing (as if it had run for long): without it
        the first lease is fenced for its validity, like after a restart that lost data."""
        with socket.create_connection(("127.0.0.1", self.port)) as s:
            s.sendall(f"SET {FENCE_KEY} 0\r\n".encode())
            assert s.recv(16).startswith(b"+OK")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    """A running private redis-server, killed after the test."""
    if shutil.which("redis-server") is None:
        missing("redis-server is not installed", "apt-get install redis-server")
    server = PrivateRedis(tmp_path)
    server.start()
    server.fence_cleared()
    yield server
    if server.proc is not None and server.proc.poll() is None:
        server.kill()
