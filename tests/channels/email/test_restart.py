"""Mail across restarts and connection loss: what was in the folder before the first start is
never answered; mail that came while chatgate was down is answered once after it starts; a
connection cut mid-IDLE reconnects and loses nothing; kill -9 answers each mail exactly once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.channels.email.servers import MailWorld, mail
from tests.channels.email.support import ALICE, email_config
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.tcp_proxy import TcpProxy
from tests.harness import over_http, running


def _subjects(world: MailWorld) -> list[str]:
    return sorted(str(m["Subject"]) for m in world.sent())


async def test_old_mail_is_ignored_and_mail_while_down_is_answered_once(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    bot = world.address
    for n in range(3):
        world.mailbox.append(mail(ALICE, bot, f"Old {n}", "from before").as_bytes())
    config = email_config(tmp_path, world, fake_llm)
    async with running(config):
        await world.deliver(mail(ALICE, bot, "First", "hello"))
        await world.wait_sent(1)
    for n in range(2):
        await world.deliver(mail(ALICE, bot, f"While down {n}", "are you there?"))
    async with running(config):
        await world.wait_sent(3)
        await world.deliver(mail(ALICE, bot, "After", "and now?"))
        await world.wait_sent(4)
        await asyncio.sleep(0.3)  # nothing more comes
    assert _subjects(world) == ["Re: After", "Re: First", "Re: While down 0", "Re: While down 1"]
    flags = world.mailbox.flags()
    assert [f for uid, f in sorted(flags.items())][:3] == ["", "", ""]  # old mail untouched


async def test_a_connection_cut_mid_idle_reconnects_and_loses_nothing(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    bot = world.address
    async with asyncio.timeout(60), TcpProxy(world.mailbox.dovecot.port) as proxy:
        world.imap_port = proxy.port
        async with running(email_config(tmp_path, world, fake_llm)):
            await world.deliver(mail(ALICE, bot, "Before", "one"))
            await world.wait_sent(1)
            await proxy.refuse()
            proxy.cut()  # the watcher is in IDLE: its connection drops
            for n in range(2):
                await world.deliver(mail(ALICE, bot, f"During {n}", "two"))
            await asyncio.sleep(0.5)
            assert len(world.sent()) == 1
            await proxy.accept()
            await world.wait_sent(3)
            await asyncio.sleep(0.3)
    assert _subjects(world) == ["Re: Before", "Re: During 0", "Re: During 1"]


@pytest.mark.slow
async def test_kill9_mid_turn_answers_each_mail_exactly_once(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    bot = world.address
    config = email_config(tmp_path, world, over_http(fake_llm))
    fake_llm.latency_s = 60
    first = await Daemon(config).start()
    for n in range(3):
        await world.deliver(mail(ALICE, bot, f"Question {n}", f"question {n}"))
    await fake_llm.wait_for_requests(3, timeout=60)  # journaled, flagged \Seen, turns running
    first.kill9()
    await first.wait()
    assert world.sent() == []
    fake_llm.latency_s = 0
    second = await Daemon(config, log_name="daemon2.log").start()
    try:
        await world.wait_sent(3, timeout=60)
        await world.deliver(mail(ALICE, bot, "Question 3", "one more"))
        await world.wait_sent(4, timeout=30)
        await asyncio.sleep(0.5)
    finally:
        assert await second.terminate() == 0
    assert _subjects(world) == [f"Re: Question {n}" for n in range(4)]
