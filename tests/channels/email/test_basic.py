"""A question by mail and its answer: threading headers, Re: once, Auto-Submitted, HTML and
plain parts; a reply in the thread continues the session; a new subject starts another."""

from __future__ import annotations

from pathlib import Path

from tests.channels.email.servers import MailWorld, mail
from tests.channels.email.support import ALICE, email_config
from tests.fakes.llm import FakeLLM
from tests.harness import running


def _ids(value: str | None) -> list[str]:
    return (value or "").replace("<", " ").replace(">", " ").split()


async def test_question_and_answer_headers(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    fake_llm.default_reply = "**Yes**, we ship on *Tuesdays*."
    async with running(email_config(tmp_path, world, fake_llm)):
        question = mail(ALICE, world.address, "Shipping days", "When do you ship?")
        await world.deliver(question)
        (answer,) = await world.wait_sent(1)
    assert answer["To"] == ALICE
    assert answer["From"] == world.address
    assert answer["Subject"] == "Re: Shipping days"
    assert answer["In-Reply-To"] == question["Message-ID"]
    assert _ids(answer["References"]) == _ids(question["Message-ID"])
    assert answer["Message-ID"].endswith("@example.org>")
    assert answer["Date"]
    assert answer["Auto-Submitted"] == "auto-replied"
    assert answer.get_content_type() == "multipart/alternative"
    plain = answer.get_body(("plain",))
    html = answer.get_body(("html",))
    assert plain is not None and html is not None
    assert "Yes, we ship on Tuesdays." in plain.get_content()
    assert "<b>Yes</b>" in html.get_content()
    prompt = fake_llm.requests[0].last_user_text
    assert prompt is not None and "When do you ship?" in prompt and "Shipping days" in prompt
    (flags,) = world.mailbox.flags().values()
    assert "\\Seen" in flags and "\\Answered" in flags


async def test_a_reply_continues_the_session_and_a_new_subject_starts_another(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    async with running(email_config(tmp_path, world, fake_llm)):
        first = mail(ALICE, world.address, "Order 17", "Where is order 17?")
        await world.deliver(first)
        (answer,) = await world.wait_sent(1)
        follow = mail(
            ALICE,
            world.address,
            "RE: Re: Order 17",
            "And when will it arrive?\n\nOn Monday, Bot wrote:\n> echo: Where is order 17?",
            in_reply_to=answer["Message-ID"],
            references=f"{first['Message-ID']} {answer['Message-ID']}",
        )
        await world.deliver(follow)
        second = (await world.wait_sent(2))[1]
        # a client that keeps only In-Reply-To (to the bot's answer) stays in the thread
        third = mail(
            ALICE, world.address, "Re: Order 17", "Thanks!", in_reply_to=second["Message-ID"]
        )
        await world.deliver(third)
        await world.wait_sent(3)
        other = mail(ALICE, world.address, "Invoice", "Please send the invoice.")
        await world.deliver(other)
        fourth = (await world.wait_sent(4))[3]
    assert second["Subject"] == "Re: Order 17"
    assert second["In-Reply-To"] == follow["Message-ID"]
    assert _ids(second["References"]) == _ids(
        f"{first['Message-ID']} {answer['Message-ID']} {follow['Message-ID']}"
    )
    assert fourth["Subject"] == "Re: Invoice"
    assert _ids(fourth["References"]) == _ids(other["Message-ID"])
    # the thread's history reached the model; the quote in the mail did not
    sizes = [len(r.body["messages"]) for r in fake_llm.requests]
    assert sizes[1] > sizes[0] and sizes[2] > sizes[1]
    assert sizes[3] < sizes[2]  # a new subject: a fresh session
    assert fake_llm.requests[1].last_user_text == "And when will it arrive?"


async def test_subject_fallback_for_clients_that_drop_threading_headers(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    async with running(email_config(tmp_path, world, fake_llm)):
        await world.deliver(mail(ALICE, world.address, "Refund", "I want a refund."))
        await world.wait_sent(1)
        await world.deliver(mail(ALICE, world.address, "Re: Refund", "Any news?"))
        await world.wait_sent(2)
    sizes = [len(r.body["messages"]) for r in fake_llm.requests]
    assert sizes[1] > sizes[0]
