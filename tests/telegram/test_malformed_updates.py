"""Updates PTB accepts but the Bot API never sends are ignored with a reason (found by fuzzing)."""

from __future__ import annotations

from typing import Any

import pytest
from telegram import Update

from chatgate.channels.telegram.inbound import BotIdentity, Ignored, normalize
from chatgate.policies.reasons import DropReason


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
