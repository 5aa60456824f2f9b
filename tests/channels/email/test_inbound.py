"""Reading mail: the plain part preferred, HTML-only mail as text, quotes and signatures cut,
threading headers, files listed; the folder handled mail is moved to; IDLE restarted often."""

from __future__ import annotations

import asyncio
from email.message import EmailMessage
from pathlib import Path

from chatgate.channels.email.inbound import html_to_text, message_ids, parse, part_bytes
from tests.channels.email.servers import MailWorld, mail
from tests.channels.email.support import ALICE, email_config
from tests.fakes.llm import FakeLLM
from tests.harness import running


def _html_only() -> EmailMessage:
    msg = mail(ALICE, "bot@example.org", "Hi", "")
    msg.set_content(
        "<html><head><style>p{color:red}</style></head><body><p>Hello&nbsp;there,</p>"
        "<ul><li>one</li><li>two</li></ul><script>x()</script></body></html>",
        subtype="html",
    )
    return msg


def test_html_only_mail_becomes_text() -> None:
    parsed = parse(_html_only().as_bytes(), "fallback@x")
    assert parsed is not None
    assert parsed.text == "Hello\xa0there,\n\n- one\n- two"
    assert "color" not in html_to_text("<style>p{color:red}</style>ok")


def test_plain_preferred_quotes_cut_and_files_listed() -> None:
    msg = mail(
        ALICE,
        "bot@example.org",
        "Re: Q",
        "New words\n\nOn Mon, Bot <bot@example.org> wrote:\n> old words",
        message_id="<m2@example.org>",
        in_reply_to="<m1@example.org>",
        references="<m0@example.org> <m1@example.org>",
    )
    msg.add_alternative("<p>HTML words</p>", subtype="html")
    msg.add_attachment(b"%PDF-1.4 x", maintype="application", subtype="pdf", filename="a.pdf")
    parsed = parse(msg.as_bytes(), "fallback@x")
    assert parsed is not None
    assert parsed.text == "New words"
    assert parsed.thread.message_id == "m2@example.org"
    assert parsed.thread.in_reply_to == "m1@example.org"
    assert parsed.thread.references == ("m0@example.org", "m1@example.org")
    [part] = parsed.parts
    assert (part.name, part.mime, part.kind) == ("a.pdf", "application/pdf", "document")
    assert part_bytes(msg.as_bytes(), part.index) == (b"%PDF-1.4 x", "application/pdf")


def test_a_mail_without_message_id_gets_the_fallback() -> None:
    parsed = parse(b"From: a@example.org\r\nSubject: x\r\n\r\nbody\r\n", "uid-1-7@bot")
    assert parsed is not None and parsed.thread.message_id == "uid-1-7@bot"
    assert message_ids("<a@b> <c@d>") == ("a@b", "c@d")
    assert message_ids("bare@id") == ("bare@id",)
    assert message_ids("") == ()


def _raw(charset: bytes, body: bytes, subject: bytes = b"Odd charset") -> bytes:
    return (
        b"From: Alice <alice@example.org>\r\nTo: bot@example.org\r\nSubject: "
        + subject
        + b"\r\nMessage-ID: <"
        + charset.strip(b'"')
        + b"@example.net>\r\n"
        b"Content-Type: text/plain; charset=" + charset + b"\r\n"
        b"Content-Transfer-Encoding: 8bit\r\n\r\n" + body + b"\r\n"
    )


def test_a_charset_python_lacks_still_gives_the_text() -> None:
    """Outlook labels Korean `ks_c_5601-1987`; gateways write `unknown-8bit`; some clients make
    labels up: the mail is read (its charset's alias, else UTF-8 with replacement), not skipped."""
    korean = parse(_raw(b"ks_c_5601-1987", "안녕하세요".encode("cp949")), "f@x")
    assert korean is not None and korean.text == "안녕하세요"
    for label in (b"unknown-8bit", b"x-made-up", b"base64", b'"utf-8\x00"', b"idna"):
        parsed = parse(_raw(label, "caf\u00e9 ok".encode()), "f@x")
        assert parsed is not None and parsed.text == "caf\u00e9 ok", label
    broken_id = _raw(b"utf-8", b"hi").replace(b"<utf-8@example.net>", b"<>")
    kept = parse(broken_id, "f@x")  # the library raises reading `<>`: the mail is still read
    assert kept is not None and kept.thread.message_id == "f@x" and kept.text == "hi"
    named = _raw(b"utf-8", b"see file").replace(
        b"Content-Type: text/plain; charset=utf-8",
        b"Content-Type: application/pdf; name*=x-bogus''r%E9sum%E9.pdf",
    )
    found = parse(named, "f@x")
    assert found is not None and found.facts.sender == "alice@example.org"


async def test_mail_in_a_charset_python_lacks_is_answered(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    async with running(email_config(tmp_path, world, fake_llm)):
        world.mailbox.append(_raw(b"ks_c_5601-1987", "주문 상태?".encode("cp949")))
        world.mailbox.append(_raw(b"x-made-up", b"where is my order?", b"Made-up charset"))
        answers = await world.wait_sent(2)
    assert sorted(str(a["Subject"]) for a in answers) == ["Re: Made-up charset", "Re: Odd charset"]
    prompts = " ".join(r.last_user_text or "" for r in fake_llm.requests)
    assert "주문 상태?" in prompts and "where is my order?" in prompts


async def test_handled_mail_is_moved_and_idle_is_restarted(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    world.mailbox.imap().create("Handled")
    text = email_config(tmp_path, world, fake_llm).read_text()
    text = text.replace(
        "      timeout_s: 5\n    smtp:",
        "      timeout_s: 5\n      move_handled_to: Handled\n      idle_renew_s: 0.3\n    smtp:",
    )
    config = tmp_path / "gateway.yaml"
    config.write_text(text)
    async with running(config):
        await asyncio.sleep(1.0)  # IDLE ended and started again a few times
        await world.deliver(mail(ALICE, world.address, "Move me", "answered, then moved"))
        await world.deliver(
            mail(ALICE, world.address, "Robot", "x", headers={"Auto-Submitted": "auto-generated"})
        )
        await world.wait_sent(1)
        for _ in range(100):
            if world.mailbox.count("Handled") == 2:
                break
            await asyncio.sleep(0.05)
    assert world.mailbox.count("Handled") == 2
    assert world.mailbox.count("INBOX") == 0
    flags = sorted(world.mailbox.flags("Handled").values())
    assert flags == ["\\Answered \\Seen", "\\Seen"]
