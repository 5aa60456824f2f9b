"""Attachments both ways: an image goes to a vision model and a PDF's text to the prompt
(fetched from the mail itself); files in an answer go out attached to its one mail."""

from __future__ import annotations

from pathlib import Path

from tests.channels.email.servers import MailWorld, mail
from tests.channels.email.support import ALICE, email_config
from tests.fakes.llm import FakeLLM
from tests.harness import running
from tests.media.samples import pdf, png

VISION = "    media:\n      vision: true\n"


async def test_an_image_and_a_pdf_reach_the_model(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    question = mail(ALICE, world.address, "Photo and memo", "What do you see?")
    question.add_attachment(png(), maintype="image", subtype="png", filename="photo.png")
    question.add_attachment(
        pdf("Meeting moved to Friday"), maintype="application", subtype="pdf", filename="memo.pdf"
    )
    async with running(email_config(tmp_path, world, fake_llm, agent=VISION)):
        await world.deliver(question)
        await world.wait_sent(1)
    [request] = fake_llm.requests
    content = request.messages[-1]["content"]
    assert isinstance(content, list)
    kinds = [part["type"] for part in content]
    assert "image_url" in kinds
    text = " ".join(part.get("text", "") for part in content if part["type"] == "text")
    assert "What do you see?" in text
    assert "[document: memo.pdf]" in text and "Meeting moved to Friday" in text


async def test_files_in_an_answer_are_attached_to_one_mail(
    tmp_path: Path, world: MailWorld, fake_llm: FakeLLM
) -> None:
    agents = '  files: {backend: python, function: "tests.channels.email.agents:files"}\n'
    config = email_config(tmp_path, world, fake_llm, agents=agents, channel="    agent: files\n")
    async with running(config):
        await world.deliver(mail(ALICE, world.address, "Report", "Q3 please"))
        [answer] = await world.wait_sent(1)
        assert len(world.sent()) == 1
    assert answer["Subject"] == "Re: Report"
    names = {part.get_filename(): part for part in answer.iter_attachments()}
    assert set(names) == {"chart.png", "report.pdf"}
    assert names["report.pdf"].get_content() == b"%PDF-1.4 fake"
    assert names["chart.png"].get_content_type() == "image/png"
    body = answer.get_body(("plain",))
    assert body is not None and "Here is the report for:" in body.get_content()
