"""The fault proxy against a tiny RESP upstream: it forwards, delays, refuses, cuts, and fails
the commands right after the Nth matching one (with a Redis error in order, or a close)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.fakes.tcp_proxy import UNKNOWN, TcpProxy, parse_commands
from tests.support.waiting import eventually


def resp(*args: str) -> bytes:
    out = f"*{len(args)}\r\n".encode()
    for a in args:
        out += f"${len(a.encode())}\r\n{a}\r\n".encode()
    return out


class Upstream:
    """Answers each command with +NAME (and the unknown one with -ERR, as Redis does)."""

    def __init__(self) -> None:
        self.seen: list[list[bytes]] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        buffer = bytearray()
        while chunk := await reader.read(4096):
            buffer.extend(chunk)
            for raw, args in parse_commands(buffer):
                self.seen.append(args)
                if raw == UNKNOWN:
                    writer.write(b"-ERR unknown command 'CHATGATE-PROXY-FAULT'\r\n")
                else:
                    writer.write(b"+" + args[0] + b"\r\n")
            await writer.drain()
        writer.close()


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    server = Upstream()
    await server.start()
    yield server
    await server.stop()


async def connect(proxy: TcpProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", proxy.port)


async def replies(reader: asyncio.StreamReader, n: int) -> list[bytes]:
    return [(await asyncio.wait_for(reader.readline(), 5)).rstrip() for _ in range(n)]


def test_parse_takes_complete_commands_and_leaves_a_partial_one() -> None:
    whole = resp("SET", "k", "v\r\nwith crlf") + resp("GET", "k")
    buffer = bytearray(whole + b"PING\r\n" + resp("DEL", "k")[:7])
    parsed = parse_commands(buffer)
    assert [args for _, args in parsed] == [
        [b"SET", b"k", b"v\r\nwith crlf"],
        [b"GET", b"k"],
        [b"PING"],
    ]
    assert b"".join(raw for raw, _ in parsed) == whole + b"PING\r\n"
    assert bytes(buffer) == resp("DEL", "k")[:7]
    buffer.extend(resp("DEL", "k")[7:])
    assert [args for _, args in parse_commands(buffer)] == [[b"DEL", b"k"]]
    assert buffer == bytearray()


async def test_passes_commands_and_replies_and_records_them(upstream: Upstream) -> None:
    async with TcpProxy(upstream.port) as proxy:
        reader, writer = await connect(proxy)
        writer.write(resp("SET", "a", "1") + resp("GET", "a"))
        assert await replies(reader, 2) == [b"+SET", b"+GET"]
        assert proxy.commands == [[b"SET", b"a", b"1"], [b"GET", b"a"]]
        assert proxy.count("set") == 1 and proxy.count("GET", contains=b"b") == 0
        writer.close()


async def test_delay_holds_each_chunk_until_its_wait_ends(upstream: Upstream) -> None:
    waits: list[float] = []
    release = asyncio.Event()

    async def held(seconds: float) -> None:
        waits.append(seconds)
        await release.wait()

    async with TcpProxy(upstream.port, sleep=held) as proxy:
        proxy.delay_s = 0.25
        reader, writer = await connect(proxy)
        writer.write(resp("PING"))
        await eventually(lambda: bool(waits), 5, "the delay's wait")
        assert waits == [0.25] and upstream.seen == []  # held before it reaches the server
        release.set()
        assert await replies(reader, 1) == [b"+PING"]
        assert waits == [0.25, 0.25]  # the reply was delayed as well
        writer.close()


async def test_refuse_then_accept_on_the_same_port(upstream: Upstream) -> None:
    async with TcpProxy(upstream.port) as proxy:
        port = proxy.port
        await proxy.refuse()
        with pytest.raises(ConnectionRefusedError):
            await connect(proxy)
        await proxy.accept()
        assert proxy.port == port
        reader, writer = await connect(proxy)
        writer.write(resp("PING"))
        assert await replies(reader, 1) == [b"+PING"]
        writer.close()


async def test_cut_resets_open_connections_and_new_ones_work(upstream: Upstream) -> None:
    async with TcpProxy(upstream.port) as proxy:
        reader, writer = await connect(proxy)
        writer.write(resp("PING"))
        assert await replies(reader, 1) == [b"+PING"]
        proxy.cut()
        with pytest.raises(ConnectionResetError):
            assert await asyncio.wait_for(reader.read(1), 5) == b""
            raise ConnectionResetError  # a clean EOF counts as cut as well
        reader, writer = await connect(proxy)
        writer.write(resp("PING"))
        assert await replies(reader, 1) == [b"+PING"]
        writer.close()


async def test_fail_after_answers_the_next_commands_with_an_error_in_order(
    upstream: Upstream,
) -> None:
    async with TcpProxy(upstream.port) as proxy:
        fault = proxy.fail_after("EVALSHA", nth=2, contains=b"journal", count=2)
        reader, writer = await connect(proxy)
        writer.write(resp("EVALSHA", "x", "1", "other") + resp("EVALSHA", "x", "1", "journal:a"))
        assert await replies(reader, 2) == [b"+EVALSHA", b"+EVALSHA"]
        assert not fault.armed and fault.seen == 1
        # one pipeline: the journal write, two failed commands, then a normal one again
        writer.write(
            resp("EVALSHA", "x", "1", "journal:b") + resp("HSET", "h", "f", "v") + resp("GET", "a")
        )
        writer.write(resp("GET", "b"))
        got = await replies(reader, 4)
        assert got[0] == b"+EVALSHA" and got[3] == b"+GET"
        assert all(r.startswith(b"-ERR unknown command") for r in got[1:3])
        assert len(fault.failed) == 2 and not fault.armed
        assert fault.failed == [[b"HSET", b"h", b"f", b"v"], [b"GET", b"a"]]
        assert [b"HSET", b"h", b"f", b"v"] not in proxy.commands
        writer.close()


async def test_fail_after_can_close_the_connection_instead(upstream: Upstream) -> None:
    async with TcpProxy(upstream.port) as proxy:
        proxy.fail_after("SET", action="close")
        hello = await connect(proxy)  # a connection's set-up is not what a fault fails
        hello[1].write(resp("HELLO", "3"))
        assert await replies(hello[0], 1) == [b"+HELLO"]
        reader, writer = await connect(proxy)
        writer.write(resp("SET", "a", "1") + resp("GET", "a") + resp("GET", "b"))
        assert await asyncio.wait_for(reader.read(), 5) in (b"", b"+SET\r\n")
        await eventually(lambda: bool(upstream.seen), 5, "the server reading the SET")
        assert upstream.seen[-1] == [b"SET", b"a", b"1"]  # what came before still went through
        reader, writer = await connect(proxy)  # only that one command failed
        writer.write(resp("GET", "a"))
        assert await replies(reader, 1) == [b"+GET"]
        writer.close()
