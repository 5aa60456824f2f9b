"""A private redis-server (own port, append-only file in tmp) killed and restarted under a gateway:
intake refuses while it is down (the platform keeps the message), nothing is lost after."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.exceptions import RedisError

from chatgate.clock import SystemClock
from chatgate.state import admin
from chatgate.state.factory import build_state
from tests.fakes.llm import FakeLLM
from tests.harness import load, memory, running
from tests.redis.test_gateway_redis import config, on_redis
from tests.requires import missing

pytestmark = pytest.mark.redis


class PrivateRedis:
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

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        missing("redis-server is not installed", "apt-get install redis-server")
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    if server.proc is not None and server.proc.poll() is None:
        server.kill()


async def test_redis_restart_refuses_intake_meanwhile_and_loses_nothing(
    tmp_path: Path, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    fake_llm.default_reply = lambda r: f"re: {r.last_user_text}"
    path = config(tmp_path / "a", fake_llm, on_redis(private_redis.url, "a"))
    async with running(path) as gw:
        chat = memory(gw)
        await (await chat.inject("before", message_id="m1")).result
        private_redis.kill()
        refused = 0
        with pytest.raises((RedisError, OSError)):  # not journaled: the platform keeps it
            await chat.inject("during", message_id="m2")
        refused += 1
        private_redis.start()
        for _ in range(50):  # the platform re-delivers until it is accepted
            try:
                sub = await chat.inject("during", message_id="m2")
                break
            except (RedisError, OSError):
                refused += 1
                await asyncio.sleep(0.1)
        else:
            raise AssertionError("the gateway did not recover after Redis came back")
        await sub.result
    assert refused >= 1
    assert chat.texts() == ["re: before", "re: during"]
    # the turn after the restart saw the transcript written before it
    assert [len(r.messages) for r in fake_llm.requests] == [1, 3]
    loaded = load(path)
    state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
    await state.open()
    try:
        [session] = (await admin.sessions_list(state))["sessions"]
        assert session["message_count"] == 4
    finally:
        await state.close()
