"""edits: new_turn on Telegram: an edited message is answered as a turn tagged as an edit, each
edit once; an edit never replays a command. Through the real PTB against the fake Bot API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from telegram import Update

from chatgate.channels.telegram.inbound import Ignored, normalize
from chatgate.model.reasons import DropReason
from chatgate.policies.edits import EDIT_MODE, EDIT_OF
from tests.channels.telegram.helpers_b import _BOT, ME, settled
from tests.channels.telegram.support import telegram_config
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.support.waiting import eventually


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
     ("new_turn", " /stop now", DropReason.EDITED_IGNORED),
     ("replace", "changed my mind", "turn"), ("replace", "/stop", DropReason.EDITED_IGNORED)],
)  # fmt: skip
def test_edit_policy(fake: FakeTelegram, edits: str, text: str, outcome: object) -> None:
    fake.dm(42, "original")
    result = _parse(fake.edited(42, 42, text), edits)
    if outcome == "turn":
        assert not isinstance(result, Ignored)
        assert result.text == text and not result.is_command  # type: ignore[union-attr]
        assert result.extra[EDIT_OF] == "telegram:42:10001"  # type: ignore[union-attr]
        assert result.extra[EDIT_MODE] == edits  # type: ignore[union-attr]
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
        await fake_tg.wait_for("sendMessage", timeout=30)  # the first turn pays litellm's import
        fake_tg.edited(42, 42, "what is 2+4?")
        calls = await fake_tg.wait_for("sendMessage", count=2, timeout=15)
    assert calls[1].params["text"] == "echo: what is 2+4?"
    said = [m["content"] for m in fake_llm.requests[1].messages if m["role"] == "user"]
    assert said == ["what is 2+3?", "what is 2+4?"]


async def test_replace_swaps_a_waiting_message_and_ignores_an_edit_after_the_answer(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    """The debounce window holds the first message's turn (an injected clock): its edit takes
    its place; once answered, a further edit is recorded as edited_ignored, not answered."""
    config = telegram_config(
        tmp_path,
        fake_tg,
        fake_llm,
        channel="    dm_policy: open\n    edits: replace\n    debounce_ms: 1000",
    )
    clock = ManualClock()
    async with running(config, clock=clock) as gw:
        fake_tg.dm(42, "what is 2+3?")
        await eventually(lambda: bool(clock.pending()), what="the burst wait")
        first_edit = fake_tg.edited(42, 42, "what is 2+4?")
        original = await settled(gw, "telegram:42:10001", timeout=15)
        clock.advance(2.0)
        [answer] = await fake_tg.wait_for("sendMessage", timeout=30)  # pays litellm's import
        edit = await settled(gw, _key(first_edit), timeout=15)
        late_edit = fake_tg.edited(42, 42, "what is 2+5?")
        late = await settled(gw, _key(late_edit), timeout=15)
    assert (original.stage, original.reason) == ("edit", "edit_replaced")
    assert edit.state == "done" and answer.params["text"] == "echo: what is 2+4?"
    assert [r.last_user_text for r in fake_llm.requests] == ["what is 2+4?"]
    assert (late.stage, late.reason) == ("edit", "edited_ignored")


def _key(update: dict[str, Any]) -> str:
    msg = _parse(update, "replace")
    assert not isinstance(msg, Ignored)
    return msg.key  # type: ignore[attr-defined,no-any-return]
