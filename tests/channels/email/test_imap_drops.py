"""An IMAP command in flight when its connection drops, or that the server never answers, fails
as `ImapGone` (the caller reconnects), and so does a connection whose greeting is cut short:
aioimaplib leaves a command waiting for ever, bounds neither UID STORE nor MOVE, and a greeting
cut short holds its state lock so its own timeout never ends; a mail's \\Answered flag or the
operations connection's connect held that connection's lock, and the channel's stop waited on
it without end."""

from __future__ import annotations

import asyncio

import pytest

from chatgate.channels.email.config import ImapConfig
from chatgate.channels.email.imap import ImapGone, ImapSession, connect
from tests.channels.email.servers import MailWorld, mail
from tests.channels.email.support import ALICE
from tests.fakes.tcp_proxy import TcpProxy


def imap(world: MailWorld, port: int, timeout_s: float) -> ImapConfig:
    box = world.mailbox
    return ImapConfig(
        host="127.0.0.1",
        port=port,
        tls="none",
        username=box.user,
        password=box.password,
        timeout_s=timeout_s,
    )


class Stall:
    """The proxy's per-chunk wait: once armed, lets ``passes`` more chunks through, then holds
    every chunk."""

    def __init__(self, passes: int = 0) -> None:
        self.armed = False
        self.passes = passes
        self.holding = asyncio.Event()
        self._never = asyncio.Event()

    async def __call__(self, _: float) -> None:
        if not self.armed:
            return
        if self.passes:
            self.passes -= 1
            return
        self.holding.set()
        await self._never.wait()


async def stalled_flag(world: MailWorld, timeout_s: float) -> tuple[TcpProxy, Stall, ImapSession]:
    await world.deliver(mail(ALICE, world.address, "Hi", "one"))
    stall = Stall()
    proxy = TcpProxy(world.mailbox.dovecot.port, sleep=stall)
    await proxy.start()
    session = await connect(imap(world, proxy.port, timeout_s))
    proxy.delay_s = 1.0  # every chunk now goes through `stall`
    stall.armed = True
    return proxy, stall, session


async def test_a_store_in_flight_when_the_connection_drops_fails_at_once(world: MailWorld) -> None:
    proxy, stall, session = await stalled_flag(world, timeout_s=600)
    try:
        flag = asyncio.ensure_future(session.flag(1, "\\Answered"))
        await asyncio.wait_for(stall.holding.wait(), 10)  # the STORE is on the wire
        proxy.cut()
        with pytest.raises(ImapGone, match="closed"):
            await asyncio.wait_for(flag, 30)
    finally:
        await session.close()
        await proxy.stop()


async def test_a_store_the_server_never_answers_fails_after_the_timeout(world: MailWorld) -> None:
    proxy, _, session = await stalled_flag(world, timeout_s=0.5)
    try:
        with pytest.raises(ImapGone, match="no answer"):
            await asyncio.wait_for(session.flag(1, "\\Answered"), 30)
    finally:
        proxy.cut()
        await session.close()
        await proxy.stop()


@pytest.mark.parametrize("cut", [True, False], ids=["cut", "stalled"])
async def test_a_greeting_cut_short_or_stalled_fails_the_connect(
    world: MailWorld, cut: bool
) -> None:
    """The server's greeting passes; the CAPABILITY that aioimaplib sends on it is held, then
    the connection drops (or stays silent)."""
    stall = Stall(passes=1)
    stall.armed = True
    proxy = TcpProxy(world.mailbox.dovecot.port, sleep=stall)
    proxy.delay_s = 1.0
    await proxy.start()
    try:
        connecting = asyncio.ensure_future(connect(imap(world, proxy.port, 600 if cut else 0.5)))
        await asyncio.wait_for(stall.holding.wait(), 10)
        if cut:
            proxy.cut()
        with pytest.raises(ImapGone):
            await asyncio.wait_for(connecting, 30)
    finally:
        proxy.cut()
        await proxy.stop()
