"""kill -9 after Meta got its 200: every message is answered exactly once by the next daemon,
a file whose download the crash cut short is fetched again by its handle."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.channels.whatsapp.support import WEBHOOK, whatsapp_config
from tests.daemon import ROOT, Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.whatsapp import FakeWhatsApp
from tests.harness import over_http
from tests.media.samples import pdf

PATH = {"PYTHONPATH": str(ROOT)}  # the menu agent in the config lives in tests/


@pytest.mark.slow
async def test_kill9_after_the_200_answers_each_message_exactly_once_after_restart(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    config = whatsapp_config(tmp_path, fake_wa, over_http(fake_llm))
    fake_llm.latency_s = 60
    # and one message whose document is still downloading when the daemon dies
    fake_wa.media.add("MEDIA-K", pdf("Delivery on Tuesday"), "application/pdf")
    fake_wa.media.stall()
    first = await Daemon(config, env=PATH).start()
    users = [f"1555123000{n}" for n in range(3)]
    posts = [fake_wa.message(u, text=f"question from {u}", wamid=f"wamid.IN-{u}") for u in users]
    doc = {"id": "MEDIA-K", "mime_type": "application/pdf", "filename": "note.pdf"}
    doc_user = "15551230009"
    doc_post = fake_wa.message(doc_user, "document", document=doc, wamid="wamid.IN-doc")
    for post in [*posts, doc_post]:
        status, _ = await fake_wa.post(first.base + WEBHOOK, post)
        assert status == 200  # acked: Meta will not send it again
    await fake_llm.wait_for_requests(len(posts), timeout=60)  # turns running
    await asyncio.wait_for(fake_wa.media.arrived.wait(), 30)  # that turn is inside the download
    first.kill9()
    await first.wait()
    fake_llm.latency_s = 0
    fake_wa.media.release()
    assert fake_wa.sent() == []
    assert list((tmp_path / "state" / "media-tmp").glob("*"))  # the killed download's directory
    second = await Daemon(config, env=PATH, log_name="daemon2.log").start()
    try:
        await fake_wa.wait_sent(len(posts) + 1, timeout=60)
        # a late redelivery of a message answered across the crash is still one answer
        assert (await fake_wa.post(second.base + WEBHOOK, posts[0]))[0] == 200
    finally:
        assert await second.terminate() == 0
    sent = fake_wa.sent()
    assert sorted(m["text"]["body"] for m in sent) == sorted(
        [
            *(f"echo: question from {u}" for u in users),
            "echo: [document: note.pdf]\nDelivery on Tuesday",
        ]
    )
    assert sorted(m["to"] for m in sent) == sorted([*users, doc_user])
    assert all(m["type"] == "text" for m in sent)  # the window survived the crash: no template
    assert fake_wa.media.requested == ["MEDIA-K", "MEDIA-K"]  # fetched again by its handle
    assert not list((tmp_path / "state" / "media-tmp").glob("*/*"))  # swept, then cleaned
