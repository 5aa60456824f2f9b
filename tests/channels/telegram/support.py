"""Gateway + fake Bot API + fake model wiring for Telegram tests."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.harness import fake_model_config


def api_base(fake: FakeTelegram) -> str:
    return fake.base_url.removesuffix("/bot")


def telegram_config(
    tmp_path: Path,
    tg: FakeTelegram,
    llm: FakeLLM,
    *,
    channel: str = "",
    gateway: str = "",
    agent: str = "",
    token: str = TOKEN,
    api_key: str = "sk-telegram-test",
) -> Path:
    return fake_model_config(
        tmp_path,
        llm,
        f"""  telegram:
    token: "{token}"
    api_base: {api_base(tg)}
    poll_timeout_s: 1
    request_timeout_s: 5
{channel}
""",
        head=gateway,
        agents=f"{agent}\n",
        api_key=api_key,
    )
