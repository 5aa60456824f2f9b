"""A switchable TCP proxy (127.0.0.1, ephemeral port) for faults between chatgate and Redis.

Modes a test flips at any time: pass, ``delay_s`` per forwarded chunk, ``refuse()`` new
connections (the listener closes: connects fail at once), ``cut()`` every open connection (RST),
``go_down()`` (every connection, open or new, reset until ``down`` is False again),
and ``fail_after(...)``: client-to-server traffic is parsed as RESP command arrays, counted by
name (and optionally by an argument substring); once the Nth matching command has gone through,
the next ``count`` commands (on any connection; a connection's set-up, HELLO and the like,
and health-check PINGs, still passes) fail, either by closing that connection or with
a Redis ``-ERR`` (the command is swapped for an unknown one, so Redis itself answers the error
in order, even inside a pipeline). ``opened_for`` names, per accepted connection, the first
command it carried past its set-up: what made the client dial.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

Action = Literal["close", "error"]
# A new connection's set-up passes even while a fault is armed: the fault is for the traffic.
# PING too: redis-py's health check, the first command on a new (or long idle) connection.
HANDSHAKE = frozenset({b"HELLO", b"AUTH", b"SELECT", b"CLIENT", b"PING"})
UNKNOWN = b"*1\r\n$20\r\nCHATGATE-PROXY-FAULT\r\n"  # Redis answers: -ERR unknown command


def parse_commands(buffer: bytearray) -> list[tuple[bytes, list[bytes]]]:
    """Take the complete RESP commands off the front of ``buffer``: (raw bytes, arguments).

    An incomplete command stays in the buffer. Inline commands (one line, space separated)
    are accepted too, as redis-cli would send them.
    """
    out: list[tuple[bytes, list[bytes]]] = []
    while buffer:
        start = 0
        if buffer[0:1] != b"*":
            end = buffer.find(b"\r\n")
            if end < 0:
                break
            out.append((bytes(buffer[: end + 2]), bytes(buffer[:end]).split()))
            del buffer[: end + 2]
            continue
        end = buffer.find(b"\r\n", start)
        if end < 0:
            break
        count, pos, args = int(buffer[1:end]), end + 2, []
        complete = True
        for _ in range(count):
            line_end = buffer.find(b"\r\n", pos)
            if line_end < 0 or buffer[pos : pos + 1] != b"$":
                complete = False
                break
            size = int(buffer[pos + 1 : line_end])
            if len(buffer) < line_end + 2 + size + 2:
                complete = False
                break
            args.append(bytes(buffer[line_end + 2 : line_end + 2 + size]))
            pos = line_end + 2 + size + 2
        if not complete:
            break
        out.append((bytes(buffer[:pos]), args))
        del buffer[:pos]
    return out


@dataclass
class Fault:
    """Fail ``count`` commands right after the ``nth`` command named ``after`` (whose arguments
    contain ``contains``, when given) went through; with ``itself``, the first ``count`` such
    commands fail instead."""

    after: str
    nth: int = 1
    contains: bytes | None = None
    action: Action = "error"
    count: int = 1
    seen: int = 0
    failed: list[list[bytes]] = field(default_factory=list)
    itself: bool = False

    def matches(self, args: list[bytes]) -> bool:
        if not args or args[0].upper() != self.after.upper().encode():
            return False
        return self.contains is None or any(self.contains in a for a in args[1:])

    @property
    def armed(self) -> bool:
        return self.seen >= self.nth and len(self.failed) < self.count

    def fails(self, args: list[bytes]) -> bool:
        if self.itself:
            return self.matches(args) and len(self.failed) < self.count
        return self.armed


class TcpProxy:
    """``async with TcpProxy(port) as proxy``: chatgate connects to ``proxy.port``."""

    def __init__(
        self,
        upstream_port: int,
        upstream_host: str = "127.0.0.1",
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.upstream = (upstream_host, upstream_port)
        self._sleep = sleep  # the delay's wait (a test can hold it)
        self.port = 0
        self.delay_s = 0.0
        self.down = False  # True: every connection is reset (open ones at once, new ones on accept)
        self.commands: list[list[bytes]] = []  # every command forwarded, in order
        self.fault: Fault | None = None
        self.accepted = 0
        self.opened_for: list[str] = []  # per connection: its first command past the set-up
        self.last_sent: list[str] = []  # per connection: the last command it carried
        self.closed: list[int] = []  # the connections the client side closed, in order
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> TcpProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        await self.refuse()
        self.cut()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def refuse(self) -> None:
        """Close the listener: new connections are refused until ``accept()``."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def accept(self) -> None:
        """Listen again on the same port (after ``refuse()``)."""
        if self._server is None:
            await self.start()

    def cut(self) -> None:
        """Reset every open connection (both sides see it at once)."""
        for writer in list(self._links):
            writer.transport.abort()
        self._links.clear()

    def fail_after(
        self,
        after: str,
        *,
        nth: int = 1,
        contains: bytes | None = None,
        action: Action = "error",
        count: int = 1,
    ) -> Fault:
        self.fault = Fault(after, nth, contains, action, count)
        return self.fault

    def fail_on(
        self, name: str, *, contains: bytes | None = None, action: Action = "error", count: int = 1
    ) -> Fault:
        """Fail the next ``count`` commands named ``name`` (containing ``contains``) themselves."""
        self.fault = Fault(name, 1, contains, action, count, itself=True)
        return self.fault

    def count(self, name: str, contains: bytes | None = None) -> int:
        return sum(1 for c in self.commands if Fault(name, contains=contains).matches(c))

    def go_down(self) -> None:
        """Redis gone for this proxy's clients, at once (a sync hook can call it): open
        connections reset, new ones reset as they come, until ``down`` is False again."""
        self.down = True
        self.cut()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self.down:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        self._links.update((writer, up_writer))
        down = asyncio.ensure_future(self._pipe(up_reader, writer, None))
        self._tasks.add(down)
        index = len(self.opened_for)
        self.opened_for.append("")
        self.last_sent.append("")
        try:
            await self._pipe(reader, up_writer, bytearray(), index)
            self.closed.append(index)
        finally:
            down.cancel()
            self._tasks.discard(down)
            for w in (writer, up_writer):
                w.transport.abort()
                self._links.discard(w)

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        commands: bytearray | None,
        index: int = -1,
    ) -> None:
        """Copy one direction; ``commands`` is the parse buffer of the client-to-server side."""
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while chunk := await reader.read(65536):
                if self.delay_s:
                    await self._sleep(self.delay_s)
                if commands is None:
                    writer.write(chunk)
                else:
                    commands.extend(chunk)
                    parsed = parse_commands(commands)
                    self._note_opener(index, parsed)
                    out, close = self._filter(parsed)
                    writer.write(out)
                    if close:  # what came before reaches the server; then the link closes
                        writer.close()
                        await writer.wait_closed()
                        return
                await writer.drain()

    def _note_opener(self, index: int, parsed: list[tuple[bytes, list[bytes]]]) -> None:
        for _, args in parsed:
            if args and args[0].upper() not in HANDSHAKE:
                words = " ".join(a.decode(errors="replace")[:48] for a in args[:3])
                self.opened_for[index] = self.opened_for[index] or words
                self.last_sent[index] = words

    def _filter(self, parsed: list[tuple[bytes, list[bytes]]]) -> tuple[bytes, bool]:
        """What to forward of these commands, and whether to close the connection after it."""
        out = bytearray()
        for raw, args in parsed:
            fault = self.fault
            handshake = bool(args) and args[0].upper() in HANDSHAKE
            if fault is not None and not handshake and fault.fails(args):
                fault.failed.append(args)
                if fault.action == "close":
                    return bytes(out), True
                out += UNKNOWN
                continue
            self.commands.append(args)
            out += raw
            if fault is not None and fault.matches(args):
                fault.seen += 1
        return bytes(out), False
