"""Texts follow the Telegram user's app language (language_code), through the real PTB."""

from __future__ import annotations

from pathlib import Path

from chatgate.model.text_ids import TextId
from chatgate.texts import LANGUAGES
from tests.channels.telegram.helpers_b import inbound
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running


def test_language_code_reaches_the_message(fake_tg: FakeTelegram) -> None:
    assert inbound(fake_tg.dm(42, "hi", language_code="de-AT")).extra["language"] == "de-AT"
    assert "language" not in inbound(fake_tg.dm(43, "hi")).extra


async def test_help_is_in_the_users_language_and_falls_back_to_the_channels(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(
        tmp_path,
        fake_tg,
        fake_llm,
        channel="    dm_policy: open\n    language: es",
    )
    async with running(config):
        fake_tg.command(42, 42, "/help", language_code="ru")
        [ru] = await fake_tg.wait_for("sendMessage", timeout=15)
        fake_tg.command(
            43, 43, "/help", language_code="pt-BR"
        )  # not shipped: the channel's language
        _, es = await fake_tg.wait_for("sendMessage", count=2, timeout=15)
    assert LANGUAGES["ru"][TextId.HELP_NEW] in ru.params["text"]
    assert LANGUAGES["es"][TextId.HELP_NEW] in es.params["text"]
    assert "/new" in ru.params["text"]
