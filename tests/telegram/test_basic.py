"""Telegram through the real python-telegram-bot against the fake Bot API."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.telegram.support import telegram_config


async def test_dm_from_allowed_user_is_answered(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(
        tmp_path, fake_tg, fake_llm, channel="    dm_policy: allowlist\n    allowed_users: [42]"
    )
    async with running(config):
        fake_tg.dm(42, "hello bot")
        [call] = await fake_tg.wait_for("sendMessage", timeout=15)
    assert call.params["chat_id"] == 42
    assert call.params["text"] == "echo: hello bot"
    assert call.params["parse_mode"] == "HTML"
    assert fake_llm.requests[0].last_user_text == "hello bot"
