"""Telegram webhook mode with a valid secret: input the webhook cannot store is a 4xx, and a
compressed bomb stops at the size limit."""

from __future__ import annotations

import gzip
from pathlib import Path

import aiohttp
import pytest

from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running, url

SECRET = "s3cret-token"
HOOK = "/tg/hook"
CHANNEL = f"""    dm_policy: open
    mode: webhook
    webhook: {{public_url: "https://example.test", path: {HOOK}, secret_token: {SECRET}}}"""

CASES = [
    ("charset=hex", {"Content-Type": "application/json; charset=hex"}, b"{}", 415),
    ("deep JSON", {}, b"[" * 20_000 + b"]" * 20_000, 400),
    ("lone surrogate", {}, b'{"update_id": 1, "message": {"text": "\\ud800"}}', 400),
    ("not UTF-8", {}, b'{"update_id": 1, "x": "\xff"}', 400),
    ("gzip bomb", {"Content-Encoding": "gzip"}, gzip.compress(b" " * (8 << 20)), 413),
    ("not gzip", {"Content-Encoding": "gzip"}, b"plain", 400),
]


@pytest.fixture
def config(tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM) -> Path:
    return telegram_config(tmp_path, fake_tg, fake_llm, channel=CHANNEL)


async def test_every_refusal_is_a_4xx_and_nothing_reaches_the_model(
    config: Path, fake_llm: FakeLLM
) -> None:
    async with running(config) as gw, aiohttp.ClientSession() as http:
        for what, extra, body, status in CASES:
            headers = {
                "Content-Type": "application/json",
                "X-Telegram-Bot-Api-Secret-Token": SECRET,
                **extra,
            }
            async with http.post(
                url(gw, HOOK), data=body, headers=headers, skip_auto_headers={"Content-Encoding"}
            ) as r:
                assert r.status == status, (what, await r.text())
                assert "reason_code" in await r.json()
    assert fake_llm.requests == []
