"""An operator changes a rate limit on the dashboard's Config page, in a real headless Chromium
against a real `chatgate run` (fake Bot API, fake model): a bad value is named with its key path
and line as it is typed, a good one is applied (file written, previous version kept, hot reload,
audited), and the next messages meet the new limit. No secret ever reaches the browser."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from tests.browser.support import (
    api,
    open_signed_in,
    start_daemon,
    stop_daemon,
    telegram_section,
)
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.harness import fake_agent, write_config

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
API_TOKEN = "Cf7vQ2kLp9Rt4Wx1Yc8Bm3Hd6Gf0Js5N"
MODEL_KEY = "sk-config-page-3f9a1c"
CUSTOMER = 4400
LIMIT = "per_sender: {rate_per_s: 5, burst: 20}"
TIGHT = "per_sender: {rate_per_s: 0.001, burst: 1}"


@dataclass
class Setup:
    daemon: Daemon
    tg: FakeTelegram
    llm: FakeLLM
    config: Path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Setup]:
    async with FakeLLM() as llm, FakeTelegram() as tg:
        config = write_config(
            tmp_path_factory.mktemp("config-page"),
            f"""  api_token: {API_TOKEN}
  rate_limits:
    # per person; raised for the launch
    {LIMIT}
{fake_agent(llm, MODEL_KEY, 20)}
channels:
{telegram_section(tg)}
""",
        )
        daemon = await start_daemon(config)
        try:
            yield Setup(daemon, tg, llm, config)
        finally:
            await stop_daemon(daemon)


async def answered(tg: FakeTelegram, text: str, timeout: float) -> None:
    await tg.wait_for("sendMessage", timeout=timeout, where=lambda c: text in c.params["text"])


async def test_edit_a_rate_limit_from_the_config_page(browser: Browser, setup: Setup) -> None:
    tg, llm, path = setup.tg, setup.llm, setup.config
    original = path.read_text()
    line = original.splitlines().index(f"    {LIMIT}") + 1
    tg.dm(CUSTOMER, "hello")  # the first turn pays litellm's import: a generous bound
    await answered(tg, "echo: hello", timeout=90)

    watched = await open_signed_in(browser, setup.daemon.base + "/dashboard/config", API_TOKEN)
    page = watched.page
    try:
        editor, validity = page.locator("#editor"), page.locator("#validity")
        text = await editor.input_value()
        assert "# per person; raised for the launch" in text and f"    {LIMIT}" in text
        row = page.locator('#keys tr[data-key="gateway.rate_limits.per_sender.burst"]')
        await expect(row).to_contain_text(f"gateway.yaml:{line}")

        await editor.fill(text.replace("burst: 20", "burst: 0"))
        await expect(validity).to_have_attribute("data-state", "bad")
        issue = page.locator('#issues li[data-key="gateway.rate_limits.per_sender.burst"]')
        await expect(issue).to_contain_text(f"(gateway.yaml:{line})")
        await expect(issue).to_contain_text("greater than or equal to 1")
        await expect(page.locator("#apply")).to_be_disabled()

        await editor.fill(text.replace(LIMIT, TIGHT))
        await expect(validity).to_have_attribute("data-state", "ok")
        await expect(page.locator("#diff")).to_contain_text(f"+    {TIGHT}")
        await expect(page.locator("#apply")).to_be_enabled()
        await page.click("#apply")
        await expect(page.locator("#toast")).to_contain_text("applied and reloaded")
        await expect(page.locator("#report")).to_contain_text("kept as gateway.yaml.1")
        change = page.locator("#history tbody tr")
        await expect(change).to_have_count(1)
        await expect(change).to_contain_text("gateway.rate_limits.per_sender.burst")
        await expect(change).to_contain_text("dashboard · 127.0.0.1")
        await expect(editor).to_have_value(text.replace(LIMIT, TIGHT))

        shown = await watched.everything()
        assert TELEGRAM_TOKEN not in shown and MODEL_KEY not in shown and API_TOKEN not in shown
        assert "pageerror" not in "\n".join(watched.console)
    finally:
        await watched.context.close()

    assert path.read_text() == original.replace(LIMIT, TIGHT)  # comments and secrets kept
    assert (path.parent / "gateway.yaml.1").read_text() == original

    tg.dm(CUSTOMER, "one")  # the clipped bucket holds one message
    await answered(tg, "echo: one", timeout=20)
    tg.dm(CUSTOMER, "two")
    await answered(tg, "faster than I can answer", timeout=20)
    assert len(llm.requests) == 2  # "two" never reached the model


async def test_the_config_api_needs_the_token(setup: Setup) -> None:
    for method, path, body in (
        ("GET", "/api/config", None),
        ("POST", "/api/config/check", {"text": "x: 1"}),
        ("POST", "/api/config/apply", {"text": "x: 1", "etag": "0"}),
        ("GET", "/api/config/history", None),
    ):
        status, _ = await api(setup.daemon, method, path, "not-the-operator-token-0000000000", body)
        assert status == 401, path
