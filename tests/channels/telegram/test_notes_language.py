"""The note under an answer the channel could not show as sent is worded in the reader's own
language, end to end through the real PTB (a table Telegram cannot show natively)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.channels.telegram.helpers_b import python_agent_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running

TABLE_AGENT = """
def agent(turn):
    return {"blocks": [
        {"type": "text", "text": "Prices"},
        {"type": "table", "columns": ["item", "eur"], "rows": [["tea", 2], ["cake", 4]]},
    ]}
"""


@pytest.mark.parametrize(
    ("language_code", "note"),
    [("ru", "(Примечание: 1 таблица показана текстом.)"),
     ("de", "(Hinweis: 1 Tabelle als Text dargestellt.)"),
     (None, "(Note: 1 table rendered as text.)")],
)  # fmt: skip
async def test_the_degrade_note_reads_in_the_users_language(
    tmp_path: Path,
    fake_tg: FakeTelegram,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    language_code: str | None,
    note: str,
) -> None:
    config = python_agent_config(
        tmp_path, monkeypatch, fake_tg, fake_llm, module="tg_table_agent", source=TABLE_AGENT
    )
    async with running(config):
        fake_tg.dm(42, "prices?", language_code=language_code)
        [answer] = await fake_tg.wait_for("sendMessage", timeout=30)
    assert note in answer.params["text"]
