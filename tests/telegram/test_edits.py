"""edits: new_turn on Telegram: an edited message is answered as a turn tagged as an edit, each
edit once; an edit never replays a command. Through the real PTB against the fake Bot API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from telegram import Update

from chatgate.channels.telegram.inbound import EDIT_OF, Ignored, normalize
from chatgate.policies.reasons import DropReason
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.telegram.helpers_b import _BOT, ME
from tests.telegram.support import telegram_config


def _parse(update: dict[str, Any], edits: str) -> object:
    parsed = Update.de_json(update, _BOT)
    assert parsed is not None
    return normalize(parsed, ME, "telegram", edits=edits)  # type: ignore[arg-type]


@pytest.fixture
def fake() -> FakeTelegram:
    return FakeTelegram()


@pytest.mark.parametrize(
    ("edits", "text", "outcome"),
    [("ignore", "changed my mind", DropReason.EDITED_IGNORED),
     ("new_turn", "changed my mind", "turn"),
     ("new_turn", "/new", DropReason.EDITED_IGNORED),  # never replays a command
     ("new_turn", " /stop now", DropReason.EDITED_IGNORED)],
)  # fmt: skip
def test_edit_policy(fake: FakeTelegram, edits: str, text: str, outcome: object) -> None:
    fake.dm(42, "original")
    result = _parse(fake.edited(42, 42, text), edits)
    if outcome == "turn":
        assert not isinstance(result, Ignored)
        assert result.text == text and not result.is_command  # type: ignore[union-attr]
        assert result.extra[EDIT_OF] == "telegram:42:10001"  # type: ignore[union-attr]
        assert result.message_id.startswith("42:10001:edit:")  # type: ignore[union-attr]
    else:
        assert result == Ignored(outcome, "42")  # type: ignore[arg-type]


def test_each_edit_has_its_own_stable_key(fake: FakeTelegram) -> None:
    fake.dm(42, "original")
    first = fake.edited(42, 42, "one")
    again = _parse(first, "new_turn")  # a redelivery of the same update: same key
    assert _parse(first, "new_turn") == again
    second = _parse(fake.edited(42, 42, "two"), "new_turn")
    assert second.message_id != again.message_id  # type: ignore[union-attr]


async def test_an_edit_is_answered_as_a_new_turn(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(
        tmp_path, fake_tg, fake_llm, channel="    dm_policy: open\n    edits: new_turn"
    )
    async with running(config):
        fake_tg.dm(42, "what is 2+3?")
        await fake_tg.wait_for("sendMessage", timeout=15)
        fake_tg.edited(42, 42, "what is 2+4?")
        calls = await fake_tg.wait_for("sendMessage", count=2, timeout=15)
    assert calls[1].params["text"] == "echo: what is 2+4?"
    said = [m["content"] for m in fake_llm.requests[1].messages if m["role"] == "user"]
    assert said == ["what is 2+3?", "what is 2+4?"]
