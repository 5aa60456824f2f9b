"""After downtime, a Telegram backlog is noticed or skipped per the channel's stale policy,
through the real PTB, with the gateway's clock two hours past the messages' dates."""

from __future__ import annotations

import time
from pathlib import Path

from chatgate.model.text_ids import TextId
from chatgate.texts import LANGUAGES
from tests.channels.telegram.support import telegram_config
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running

DOWNTIME_S = 7200.0


async def test_a_stale_message_gets_the_offline_notice_in_the_users_language(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(
        tmp_path,
        fake_tg,
        fake_llm,
        channel="    dm_policy: open\n    stale: {after_s: 3600, action: notice}",
    )
    clock = ManualClock(wall_start=time.time() + DOWNTIME_S)
    async with running(config, clock=clock) as gw:
        fake_tg.dm(42, "are you there?", language_code="de")
        [call] = await fake_tg.wait_for("sendMessage", timeout=15)
        [entry] = await gw.rt.journal.find("telegram", sender_id="42", limit=5)
    assert call.params["text"] == LANGUAGES["de"][TextId.STALE_NOTICE]
    assert (entry.stage, entry.reason) == ("stale", "stale")  # reason-coded in the journal
    assert fake_llm.requests == []


async def test_a_skipped_stale_message_stays_as_context(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(
        tmp_path,
        fake_tg,
        fake_llm,
        channel="    dm_policy: open\n    stale: {after_s: 3600, action: skip}",
    )
    async with running(config):
        fake_tg.dm(42, "my name is Ada", date=int(time.time() - DOWNTIME_S))  # the backlog
        fake_tg.dm(42, "what is my name?")
        [call] = await fake_tg.wait_for("sendMessage", timeout=15)
    assert call.params["text"] == "echo: what is my name?"  # one answer: the old one was skipped
    said = [m["content"] for m in fake_llm.requests[0].messages if m["role"] == "user"]
    assert said == ["my name is Ada", "what is my name?"]  # but kept as context
