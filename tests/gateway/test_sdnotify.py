"""sd_notify against real AF_UNIX datagram sockets (filesystem and abstract)."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatgate.gateway.process.sdnotify import Notifier

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="AF_UNIX on Linux")


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setblocking(False)
    yield sock, str(path)
    sock.close()


def drain(sock: socket.socket) -> list[bytes]:
    out: list[bytes] = []
    while True:
        try:
            out.append(sock.recv(4096))
        except BlockingIOError:
            return out


def test_ready_status_stopping_watchdog(receiver: tuple[socket.socket, str]) -> None:
    sock, path = receiver
    n = Notifier({"NOTIFY_SOCKET": path})
    assert n.enabled and n.watchdog_interval_s is None
    assert n.ready("serving 2 channels\nall good")
    assert n.stopping()
    assert n.watchdog()
    assert n.ready()
    assert drain(sock) == [
        b"READY=1\nSTATUS=serving 2 channels all good",
        b"STOPPING=1",
        b"WATCHDOG=1",
        b"READY=1",
    ]


def test_abstract_socket() -> None:
    name = f"chatgate-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.setblocking(False)
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).notify("READY=1", "STATUS=up")
        assert drain(sock) == [b"READY=1\nSTATUS=up"]


def test_disabled_without_notify_socket() -> None:
    n = Notifier({"WATCHDOG_USEC": "1000000"})
    assert not n.enabled and n.watchdog_interval_s is None
    assert not n.ready() and not n.stopping() and not n.watchdog()


def test_reads_process_environment_by_default(
    receiver: tuple[socket.socket, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", receiver[1])
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert Notifier().ready()
    assert drain(receiver[0]) == [b"READY=1"]


@pytest.mark.parametrize("raw", ["", "relative/path", "@", "vsock:2:1234"])
def test_unsupported_addresses_disable(raw: str) -> None:
    assert not Notifier({"NOTIFY_SOCKET": raw}).enabled


def test_send_failure_returns_false(tmp_path: Path) -> None:
    n = Notifier({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens.sock")})
    assert n.enabled and not n.ready()
    too_long = Notifier({"NOTIFY_SOCKET": "/" + "x" * 200})
    assert not too_long.watchdog()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WATCHDOG_USEC": "30000000"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
    ],
)
def test_watchdog_interval(env: dict[str, str], expected: float | None) -> None:
    assert Notifier({"NOTIFY_SOCKET": "/run/x.sock", **env}).watchdog_interval_s == expected


async def test_watchdog_loop_returns_at_once_when_not_configured(
    receiver: tuple[socket.socket, str],
) -> None:
    await asyncio.wait_for(Notifier({"NOTIFY_SOCKET": receiver[1]}).watchdog_loop(lambda: True), 1)
    assert drain(receiver[0]) == []


async def test_watchdog_pings_only_while_healthy(receiver: tuple[socket.socket, str]) -> None:
    sock, path = receiver
    n = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "40000"})  # ping every 20 ms
    assert n.watchdog_interval_s == pytest.approx(0.02)
    healthy: list[bool | None] = [True]

    def probe() -> bool:
        if healthy[0] is None:
            raise RuntimeError("probe broke")
        return bool(healthy[0])

    task = asyncio.create_task(n.watchdog_loop(probe))
    try:
        await asyncio.sleep(0.1)
        pings = drain(sock)
        assert len(pings) >= 2 and set(pings) == {b"WATCHDOG=1"}

        healthy[0] = False
        drain(sock)  # anything sent before the flip
        await asyncio.sleep(0.1)
        assert drain(sock) == []

        healthy[0] = None
        await asyncio.sleep(0.06)
        assert drain(sock) == []

        healthy[0] = True
        await asyncio.sleep(0.1)
        assert len(drain(sock)) >= 2
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
