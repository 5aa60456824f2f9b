"""The daemon's lifecycle as systemd/k8s see it: drain on SIGTERM, reload on SIGHUP, sd_notify."""

from __future__ import annotations

import asyncio
import signal
import socket
import sqlite3
from pathlib import Path

import pytest

from tests.daemon import Daemon, jobs_route, post_signed_job
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import fake_agent, over_http, write_config
from tests.support.waiting import eventually

pytestmark = pytest.mark.slow
SECRET = "whsec-lifecycle-0123456789abcdef"


def config(tmp_path: Path, fake: FakeLLM, *, drain: float = 10, prefix: str = "echo: ") -> Path:
    path = write_config(
        tmp_path,
        f"""{fake_agent(over_http(fake), "sk-lifecycle", 60)}
{jobs_route(SECRET)}""",
    )
    path.write_text(path.read_text().replace("drain_timeout_s: 5", f"drain_timeout_s: {drain}"))
    return path


async def post(base: str, text: str, delivery: str) -> tuple[int, dict[str, str]]:
    return await post_signed_job(base, SECRET, text, delivery)


async def test_drain_timeout_exceeded_leaves_the_turn_journaled_and_it_is_answered_once_after_restart(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    path = config(tmp_path, fake_llm, drain=1)
    fake_llm.script(Fault.hang())
    first = await Daemon(path).start()
    pending = asyncio.create_task(post(first.base, "long job", "drain-1"))
    await fake_llm.wait_for_requests(1, timeout=20)
    # the model still hangs (agent timeout 60 s): only the 1 s drain timeout lets it exit in time
    assert await first.terminate(timeout=45) == 0
    assert "drain timeout; unfinished turns stay journaled" in first.logs()
    status, body = await pending
    assert (
        status == 503 and "retry" in body["error"]
    )  # the caller is told to retry, not answered wrongly
    fake_llm.release()

    second = await Daemon(path, log_name="second.log").start()
    try:
        await fake_llm.wait_for_requests(2, timeout=20)
        status, body = await post(second.base, "long job", "drain-1")
    finally:
        await second.terminate()
    assert status == 200 and body["reply"] == "echo: long job"
    assert len(fake_llm.requests) == 2
    with sqlite3.connect(tmp_path / "state" / "chatgate.db") as db:
        answers = db.execute("SELECT COUNT(*) FROM messages WHERE role = 'assistant'").fetchone()[0]
    assert answers == 1


async def test_sighup_with_an_invalid_config_keeps_the_running_one(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    path = config(tmp_path, fake_llm)
    daemon = await Daemon(path).start()
    try:
        good = path.read_text()
        path.write_text(good.replace("signature: generic", "") + "\n  bogus_key: 1\n")
        daemon.proc.send_signal(signal.SIGHUP)  # type: ignore[union-attr]
        for _ in range(100):
            if "reload rejected" in daemon.logs():
                break
            await asyncio.sleep(0.05)
        status, body = await post(daemon.base, "still serving?", "hup-1")
        assert status == 200 and body["reply"] == "echo: still serving?"

        path.write_text(good.replace('prompt: "{payload.text}"', 'prompt: "NEW {payload.text}"'))
        daemon.proc.send_signal(signal.SIGHUP)  # type: ignore[union-attr]
        for _ in range(100):
            if "config reloaded" in daemon.logs():
                break
            await asyncio.sleep(0.05)
        status, body = await post(daemon.base, "after reload", "hup-2")
    finally:
        assert await daemon.terminate() == 0
    logs = daemon.logs()
    assert "reload rejected" in logs and "bogus_key" in logs
    assert body["reply"] == "echo: NEW after reload"


async def test_sd_notify_ready_watchdog_and_stopping(tmp_path: Path, fake_llm: FakeLLM) -> None:
    sock_path = tmp_path / "notify.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(sock_path))
    listener.setblocking(False)
    env = {"NOTIFY_SOCKET": str(sock_path), "WATCHDOG_USEC": "200000"}
    messages: list[str] = []

    def received() -> list[str]:
        while True:
            try:
                messages.append(listener.recv(4096).decode())
            except BlockingIOError:
                return messages

    daemon = await Daemon(config(tmp_path, fake_llm), env=env).start()
    await eventually(lambda: received().count("WATCHDOG=1") >= 2, 30, "two watchdog pings")
    await daemon.terminate()
    received()
    listener.close()
    assert messages[0].startswith("READY=1")
    assert sum(1 for m in messages if m == "WATCHDOG=1") >= 2
    assert any(m.startswith("STOPPING=1") for m in messages)
    assert messages.index(next(m for m in messages if m.startswith("STOPPING=1"))) > 0
