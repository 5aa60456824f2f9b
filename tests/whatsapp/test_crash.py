"""kill -9 after Meta got its 200: every message is answered exactly once by the next daemon."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.daemon import ROOT, Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.whatsapp import FakeWhatsApp
from tests.whatsapp.support import WEBHOOK, whatsapp_config

PATH = {"PYTHONPATH": str(ROOT)}  # the menu agent in the config lives in tests/


@pytest.mark.slow
async def test_kill9_after_the_200_answers_each_message_exactly_once_after_restart(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    config = whatsapp_config(tmp_path, fake_wa, fake_llm)
    fake_llm.latency_s = 60
    first = await Daemon(config, env=PATH).start()
    users = [f"1555123000{n}" for n in range(3)]
    posts = [fake_wa.message(u, text=f"question from {u}", wamid=f"wamid.IN-{u}") for u in users]
    for post in posts:
        status, _ = await fake_wa.post(first.base + WEBHOOK, post)
        assert status == 200  # acked: Meta will not send it again
    await fake_llm.wait_for_requests(len(posts), timeout=60)  # turns running
    first.kill9()
    await first.wait()
    fake_llm.latency_s = 0
    assert fake_wa.sent() == []
    second = await Daemon(config, env=PATH, log_name="daemon2.log").start()
    try:
        await fake_wa.wait_sent(len(posts), timeout=60)
        # a late redelivery of a message answered across the crash is still one answer
        assert (await fake_wa.post(second.base + WEBHOOK, posts[0]))[0] == 200
    finally:
        assert await second.terminate() == 0
    sent = fake_wa.sent()
    assert sorted(m["text"]["body"] for m in sent) == sorted(
        f"echo: question from {u}" for u in users
    )
    assert sorted(m["to"] for m in sent) == users
    assert all(m["type"] == "text" for m in sent)  # the window survived the crash: no template
