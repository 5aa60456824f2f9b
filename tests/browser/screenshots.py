"""Screenshots of the web chat and the dashboard for the manual (`make screenshots`).

Runs the real daemon against the fakes: a model that streams markdown, one Telegram bot whose
token was revoked (parked, with its fix) and one a user blocked (a DLQ entry), a visitor
waiting for pairing, and a few failed turns for the chart.

    .venv/bin/python -m tests.browser.screenshots docs
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from playwright.async_api import Browser, async_playwright, expect

from tests.browser.support import (
    chat_turn,
    launch,
    open_dashboard,
    open_page,
    say,
    start_daemon,
    stop_daemon,
)
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.telegram import TOKEN, FakeTelegram, FaultSpec
from tests.harness import write_config

API_TOKEN = "Sx4vN2kLp8Rt7Wx1Yc5Bm9Hd3Gf6Js0Q"
QUESTION = "How do I list the Python files in a folder?"
ANSWER = """Use `pathlib`: it walks a directory **lazily**.

```python
from pathlib import Path

for path in sorted(Path(".").glob("*.py")):
    print(path.name, path.stat().st_size)
```

- `glob("**/*.py")` recurses into subfolders
- `is_file()` skips directories"""


def config(base: Path, llm: FakeLLM, parked: FakeTelegram, ops: FakeTelegram) -> Path:
    return write_config(
        base,
        f"""  api_token: {API_TOKEN}
agents:
  default:
    backend: litellm
    model: openai/gpt-4o-mini
    api_base: {llm.base_url}
    api_key: sk-screenshot-key-0123456789
    stream: true
  menu: {{backend: python, function: "tests.browser.agents:menu"}}
  echo: {{backend: echo}}
channels:
  webchat: {{auth: open, dm_policy: open, title: chatgate demo, agents: [menu, echo]}}
  support: {{type: webchat, path: /support, auth: open, dm_policy: pairing, agent: echo}}
  telegram: {{token: "{TOKEN}", api_base: {parked.base_url.removesuffix("/bot")}}}
  ops_bot:
    type: telegram
    token: "{TOKEN}"
    api_base: {ops.base_url.removesuffix("/bot")}
    poll_timeout_s: 1
    dm_policy: open
""",
    )


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    async with FakeLLM() as llm, FakeTelegram() as parked, FakeTelegram() as ops:
        parked.revoke_token()
        with tempfile.TemporaryDirectory() as tmp:
            daemon = await start_daemon(config(Path(tmp), llm, parked, ops))
            try:
                await chat_turn(daemon, "", "warm up")  # litellm's first import
                for fault in (Fault.rate_limited(), Fault.rate_limited(), Fault.server_error()):
                    llm.fail_next(fault)
                    await chat_turn(daemon, "", "a question that fails")
                async with async_playwright() as playwright:
                    browser = await launch(playwright)
                    await shoot(browser, daemon, llm, ops, out)
                    await browser.close()
            finally:
                await stop_daemon(daemon)


async def shoot(
    browser: Browser, daemon: Daemon, llm: FakeLLM, ops: FakeTelegram, out: Path
) -> None:
    chat = await open_page(browser)
    page = chat.page
    await page.goto(daemon.base + "/chat")
    await expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    llm.stream_chunk_delay_s = 0.02
    llm.script(ANSWER)
    await say(page, QUESTION)
    await expect(page.locator(".msg.assistant pre")).to_be_visible()
    await expect(page.locator(".msg.assistant").last).to_contain_text("skips directories")
    await page.select_option("#agent", "menu")
    await say(page, "menu")
    await page.locator(".buttons button", has_text="Blue").click()
    await expect(page.locator(".msg.assistant").last).to_contain_text("You picked")

    visitor = await open_page(browser)
    await visitor.page.goto(daemon.base + "/support")
    await expect(visitor.page.locator("#conn")).to_have_attribute("data-state", "live")
    await say(visitor.page, "hello, may I use this bot?")
    await expect(visitor.page.locator(".msg.assistant")).to_contain_text("send this code")

    ops.fail("sendMessage", FaultSpec(403, "Forbidden: bot was blocked by the user"))
    ops.dm(4242, "status of the deploy?")
    board = await open_dashboard(browser, daemon, API_TOKEN)
    await expect(board.page.locator("#dlq tr[data-dlq]")).to_have_count(1)
    await expect(board.page.locator("#pairing tr[data-code]")).to_have_count(1)
    await board.page.wait_for_timeout(2500)  # one more snapshot
    await page.screenshot(path=out / "webchat.png")
    await board.page.screenshot(path=out / "dashboard.png", full_page=True)


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs")
    asyncio.run(main(target))
    print(f"wrote {target / 'webchat.png'} and {target / 'dashboard.png'}")
