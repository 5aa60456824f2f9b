"""Updates PTB accepts but the Bot API never sends are ignored with a reason (found by fuzzing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
from telegram import Update

from chatgate.channels.telegram.inbound import BotIdentity, Ignored, normalize
from chatgate.model.reasons import DropReason
from tests.channels.telegram.support import telegram_config
from tests.channels.telegram.test_webhook_mode import CHANNEL, post
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running


@pytest.mark.parametrize(
    "data",
    [
        {"update_id": 0, "message": {"message_id": 0, "date": 0, "chat": None}},
        {"update_id": 1, "channel_post": {"message_id": 1, "date": 0, "chat": None}},
    ],
)
def test_message_without_chat_is_malformed(data: dict[str, Any]) -> None:
    update = Update.de_json(data, None)  # type: ignore[arg-type]
    assert update is not None
    result = normalize(update, BotIdentity(42, "bot"), "telegram")
    assert result == Ignored(DropReason.MALFORMED_UPDATE)


async def test_webhook_answers_400_to_updates_ptb_cannot_parse(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    """A `date` past datetime's range (OSError in PTB) and deep nesting were 500s."""
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel=CHANNEL)
    huge_date = {
        "update_id": 1,
        "channel_post": {"message_id": 1, "date": 2**60, "chat": {"id": 1, "type": "channel"}},
    }
    deep = b'{"update_id": 1, "message": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    async with running(config) as gw, aiohttp.ClientSession() as http:
        assert (await post(http, gw, huge_date))[0] == 400
        assert (await post(http, gw, deep))[0] == 400
