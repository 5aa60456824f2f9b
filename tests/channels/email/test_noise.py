"""Who gets an answer: the allow-list (addresses and whole @domains, exact), never strangers,
robots, bounces, lists or the bot itself (RFC 3834); with require_authentication_results only
mail our MTA authenticated; too large or unreadable mail is recorded and skipped."""

from __future__ import annotations

from pathlib import Path

from chatgate.channels.email.adapter import EmailChannel
from chatgate.gateway.app import Gateway
from tests.channels.email.servers import MailWorld, mail
from tests.channels.email.support import ALICE, email_config
from tests.fakes.llm import FakeLLM
from tests.harness import running


def _adapter(gw: Gateway) -> EmailChannel:
    adapter = gw.channels.adapters["email"]
    assert isinstance(adapter, EmailChannel)
    return adapter


async def test_strangers_robots_lists_bounces_and_itself_get_nothing(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    bot = world.address
    unanswerable = [
        mail("mallory@notexample.org", bot, "Hi", "stranger"),
        mail("eve@example.org.evil.net", bot, "Hi", "look-alike domain"),
        mail(ALICE, bot, "Out of office", "away", headers={"Auto-Submitted": "auto-replied"}),
        mail(ALICE, bot, "Digest", "news", headers={"Precedence": "bulk"}),
        mail(ALICE, bot, "[dev] thread", "list", headers={"List-Id": "<dev.example.org>"}),
        mail("MAILER-DAEMON@example.org", bot, "Undelivered Mail", "bounce"),
        mail(ALICE, bot, "Bounce", "null path", headers={"Return-Path": "<>"}),
        mail(bot, bot, "Re: loop", "my own answer"),
    ]
    report = mail("postmaster@example.net", bot, "Delivery Status", "x")
    report.make_mixed()
    report.replace_header("Content-Type", 'multipart/report; report-type="delivery-status"')
    unanswerable.append(report)
    async with running(email_config(tmp_path, world, fake_llm)) as gw:
        for m in unanswerable:
            await world.deliver(m)
        await world.deliver(mail("bob@friends.example.net", bot, "Hello", "domain friend"))
        await world.deliver(mail(ALICE, bot, "Question", "a real question"))
        sent = await world.wait_sent(2)
        ignored = dict(_adapter(gw).ignored)
    assert sorted(m["To"] for m in sent) == [ALICE, "bob@friends.example.net"]
    assert len(fake_llm.requests) == 2
    assert ignored == {"automated_mail": 6, "self_message": 1}
    flags = world.mailbox.flags()
    assert len(flags) == len(unanswerable) + 2
    assert all("\\Seen" in f for f in flags.values())  # handled, also when not answered


async def test_required_authentication_results(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    channel = "    require_authentication_results: true\n    authserv_id: mx.example.org\n"
    bot = world.address
    config = email_config(tmp_path, world, fake_llm, channel=channel)
    async with running(config) as gw:
        spoofed = "mx.example.org; dkim=fail; spf=fail smtp.mailfrom=example.org; dmarc=fail"
        forged = "evil.example.net; dkim=pass"  # another server's verdict is not ours
        passed = "mx.example.org; dkim=pass header.d=example.org; spf=pass"
        await world.deliver(mail(ALICE, bot, "A", "none"))
        await world.deliver(
            mail(ALICE, bot, "B", "fail", headers={"Authentication-Results": spoofed})
        )
        await world.deliver(
            mail(ALICE, bot, "C", "forged", headers={"Authentication-Results": forged})
        )
        await world.deliver(mail(ALICE, bot, "D", "ok", headers={"Authentication-Results": passed}))
        (answer,) = await world.wait_sent(1)
        ignored = dict(_adapter(gw).ignored)
    assert answer["Subject"] == "Re: D"
    assert ignored == {"unauthenticated": 3}


async def test_too_large_and_unreadable_mail_is_recorded_and_skipped(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    bot = world.address
    config = email_config(tmp_path, world, fake_llm, channel="    max_message_bytes: 4096\n")
    async with running(config) as gw:
        await world.deliver(mail(ALICE, bot, "Big", "x" * 10_000))
        world.mailbox.append(b"\xff\xfe not a mail \x00\r\n\r\n")
        await world.deliver(mail(ALICE, bot, "Small", "a question"))
        (answer,) = await world.wait_sent(1)
        ignored = dict(_adapter(gw).ignored)
    assert answer["Subject"] == "Re: Small"
    assert ignored.get("message_too_large") == 1
