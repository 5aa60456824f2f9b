"""A human takes over a Telegram chat from the dashboard, in a real headless Chromium against a
real `chatgate run` (fake Bot API, fake model): pause → the customer's message is kept, not
answered → the operator replies as the bot → resume → the model's next request has it all."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from tests.browser.support import (
    Watched,
    api,
    open_dashboard,
    start_daemon,
    stop_daemon,
    telegram_section,
)
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import fake_agent, over_http, write_config

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
API_TOKEN = "Tk4vN2kLp4Rt9Wx1Yc5Bm8Hd3Gf6Js0Q"
CUSTOMER = 4300
CHAT = f"telegram:{CUSTOMER}"


@dataclass
class Setup:
    daemon: Daemon
    tg: FakeTelegram
    llm: FakeLLM


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Setup]:
    async with FakeLLM() as llm, FakeTelegram() as tg:
        config = write_config(
            tmp_path_factory.mktemp("takeover-page"),
            f"""  api_token: {API_TOKEN}
  takeover: {{auto_resume_s: 0}}
{fake_agent(over_http(llm), "sk-takeover-page", 20)}
channels:
{telegram_section(tg)}
""",
        )
        daemon = await start_daemon(config)
        try:
            yield Setup(daemon, tg, llm)
        finally:
            await stop_daemon(daemon)


async def answered(tg: FakeTelegram, text: str, timeout: float) -> None:
    await tg.wait_for("sendMessage", timeout=timeout, where=lambda c: c.params["text"] == text)


async def test_pause_reply_and_resume_from_the_dashboard(browser: Browser, setup: Setup) -> None:
    tg, llm = setup.tg, setup.llm
    tg.dm(CUSTOMER, "hello")  # the first turn: a generous bound
    await answered(tg, "echo: hello", timeout=90)
    board: Watched = await open_dashboard(browser, setup.daemon, API_TOKEN)
    page = board.page
    try:
        row = page.locator(f'#chats tr[data-chat="{CHAT}"]')
        await expect(row).to_contain_text("bot answers")
        await row.locator("button", has_text="Pause").click()
        await expect(page.locator("#toast")).to_contain_text(f"{CHAT} paused")
        await expect(row).to_contain_text("paused until resumed (by dashboard)")

        tg.dm(CUSTOMER, "is anyone there? my card was charged twice")
        card = page.locator(f'#paused [data-paused="{CHAT}"]')
        await expect(card).to_contain_text("my card was charged twice")
        await asyncio.sleep(0.5)  # a paused chat gets no answer (nor typing) in the meantime
        assert [c.params["text"] for c in tg.calls_of("sendMessage")] == ["echo: hello"]
        assert len(llm.requests) == 1

        await card.locator("textarea").fill("Hi, Ann from billing: refunded the second charge.")
        await card.locator("button", has_text="Send").click()
        await expect(page.locator("#toast")).to_contain_text(f"sent to {CHAT} as the bot")
        await answered(tg, "Hi, Ann from billing: refunded the second charge.", timeout=10)
        human = card.locator("li.human")
        await expect(human).to_contain_text("human · dashboard")
        await expect(human).to_contain_text("refunded the second charge")
        await expect(card.locator("textarea")).to_have_value("")

        await row.locator("button", has_text="Resume").click()
        await expect(page.locator("#toast")).to_contain_text(f"{CHAT} resumed")
        await expect(row).to_contain_text("bot answers")
        await expect(card).to_have_count(0)
        assert "pageerror" not in "\n".join(board.console)
    finally:
        await board.context.close()

    tg.dm(CUSTOMER, "thank you!")
    await answered(tg, "echo: thank you!", timeout=20)
    assert len(llm.requests) == 2  # the paused message never got a turn of its own
    said = [(m["role"], m["content"]) for m in llm.requests[-1].messages if m["role"] != "system"]
    assert said == [
        ("user", "hello"),
        ("assistant", "echo: hello"),
        ("user", "is anyone there? my card was charged twice"),
        ("assistant", "Hi, Ann from billing: refunded the second charge."),
        ("user", "thank you!"),
    ]


async def test_changing_a_chat_needs_the_token(setup: Setup) -> None:
    started = time.monotonic()
    for path, body in (
        ("/api/chats/pause", {"chat": CHAT}),
        ("/api/chats/resume", {"chat": CHAT}),
        ("/api/chats/reply", {"chat": CHAT, "text": "forged"}),
    ):
        status, _ = await api(setup.daemon, "POST", path, "not-the-operator-token-0000000000", body)
        assert status == 401, path
    status, listed = await api(setup.daemon, "GET", "/api/chats", API_TOKEN)
    assert status == 200 and listed["paused"] == []
    assert all(c.params["text"] != "forged" for c in setup.tg.calls_of("sendMessage"))
    assert time.monotonic() - started < 30
