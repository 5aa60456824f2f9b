"""The 24-hour window end to end: proactive sends outside it go out as the configured template
or into the DLQ as `outside_window`, never silently; Meta's 131047 switches to the template."""

from __future__ import annotations

import time
from pathlib import Path

from chatgate.model.messages import Target
from chatgate.model.outbound import OutboundMessage
from tests.channels.telegram.helpers_b import settled
from tests.channels.whatsapp.support import USER, webhook_url, whatsapp_config
from tests.fakes.llm import FakeLLM
from tests.fakes.whatsapp import FakeWhatsApp, Template
from tests.harness import channel_status, running

TEMPLATE = """    dm_policy: open
    templates:
      outside_window: {name: chatgate_update, language: en_US, parameters: ["{text}"]}
"""
DAY = 86_400.0


async def test_outside_the_window_without_a_template_the_reply_waits_in_the_dlq(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        report = await gw.rt.delivery.deliver(
            Target("whatsapp", USER), OutboundMessage.from_text("your *weekly* digest")
        )
        [letter] = await gw.rt.dead_letters.list()
        assert fake_wa.sent() == []
        shown = channel_status(gw, "whatsapp")["last_error"]
        assert "dlq replay" in shown["hint"] and "outside_window" in shown["error"]
        # the user writes again: the window opens and the operator replays the digest
        await fake_wa.post(webhook_url(gw), fake_wa.message(USER, text="hi again"))
        await fake_wa.wait_sent(1)
        replayed = await gw.replay_dead_letter(letter.id)
        sent = await fake_wa.wait_sent(2)
    assert report.status == "undelivered" and report.kind == "outside_window"
    assert letter.kind == "outside_window" and "templates.outside_window" in letter.error
    assert replayed["status"] == "sent"
    assert {m["text"]["body"] for m in sent} == {"echo: hi again", "your _weekly_ digest"}


async def test_a_message_heard_a_day_late_is_answered_with_the_template(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    fake_wa.templates.append(Template("chatgate_update"))
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm, channel=TEMPLATE)) as gw:
        old = fake_wa.message(
            USER, text="still there?\nline two", wamid="wamid.IN-old", at=time.time() - DAY - 3600
        )
        await fake_wa.post(webhook_url(gw), old)
        [sent] = await fake_wa.wait_sent(1)
        entry = await settled(gw, "whatsapp:wamid.IN-old")
    assert sent["type"] == "template" and "context" not in sent
    template = sent["template"]
    assert template["name"] == "chatgate_update" and template["language"] == {"code": "en_US"}
    [parameter] = template["components"][0]["parameters"]
    assert parameter == {"type": "text", "text": "echo: still there? line two"}
    assert entry.delivery == "sent"


async def test_meta_refusing_a_free_form_message_switches_to_the_template(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    fake_wa.templates.append(Template("chatgate_update"))
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm, channel=TEMPLATE)) as gw:
        await fake_wa.post(webhook_url(gw), fake_wa.message(USER, text="first"))
        await fake_wa.wait_sent(1)
        fake_wa.last_inbound[USER] = time.time() - 2 * DAY  # Meta's clock disagrees with ours
        report = await gw.rt.delivery.deliver(
            Target("whatsapp", USER), OutboundMessage.from_text("later")
        )
        sent = await fake_wa.wait_sent(2)
    assert report.status == "sent"
    assert sent[1]["type"] == "template"
    assert [c.error for c in fake_wa.calls if c.error] == [131047]
