"""The web chat in a real headless Chromium against a real `chatgate run` and the fake model."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from tests.browser.support import (
    Watched,
    api,
    open_chat,
    say,
    start_daemon,
    stop_daemon,
    warm_up,
)
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import write_config
from tests.media.samples import png

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
]
API_TOKEN = "Wq3vN8kLp2Rt5Yx7Cc1Bm4Hd9Gf0Js6A"
CHAT_TOKEN = "wc-K2p9Qm4Xv7Rt1Lz8Ns5Yd3Hb6"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fake() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as llm:
        yield llm


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def daemon(fake: FakeLLM, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Daemon]:
    config = write_config(
        tmp_path_factory.mktemp("webchat-page"),
        f"""  api_token: {API_TOKEN}
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: sk-webchat-page-test
    stream: true
    timeout_s: 20
    media: {{vision: true}}
  menu: {{backend: python, function: "tests.browser.agents:menu"}}
channels:
  webchat:
    auth: token
    token: {CHAT_TOKEN}
    dm_policy: open
    agents: [menu]
    stream: {{enabled: true, min_edit_interval_s: 0.2}}
""",
    )
    running = await start_daemon(config)
    await warm_up(running, CHAT_TOKEN)
    try:
        yield running
    finally:
        await stop_daemon(running)


@pytest_asyncio.fixture(loop_scope="module")
async def chat(browser: Browser, daemon: Daemon, fake: FakeLLM) -> AsyncIterator[Watched]:
    fake.reset()
    fake.latency_s = fake.stream_chunk_delay_s = 0.0
    watched = await open_chat(browser, daemon, CHAT_TOKEN)
    try:
        yield watched
    finally:
        await watched.context.close()


async def test_the_token_gates_the_chat(browser: Browser, daemon: Daemon) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    try:
        assert (await page.request.get(daemon.base + "/chat/api/events")).status == 401
        send = await page.request.post(daemon.base + "/chat/api/send", data={"text": "hi"})
        assert send.status == 401
        await page.goto(daemon.base + "/chat")
        await page.fill("#token", "not-the-token")
        await page.press("#token", "Enter")
        await expect(page.locator("#signin-error")).to_have_text("That token is not right.")
        await expect(page.locator("#input")).to_be_disabled()
    finally:
        await context.close()


async def test_a_streamed_markdown_answer_replaces_its_draft(chat: Watched, fake: FakeLLM) -> None:
    page = chat.page
    fake.latency_s = 2.0  # the typing indicator shows after 0.5 s, until the first draft
    fake.stream_chunk_delay_s = 0.1
    fake.script(
        "Here is **the plan**:\n```python\nprint('hi')\n```\nand that is all of the steps, done."
    )
    await say(page, "plan please")
    await expect(page.locator("#typing")).to_be_visible()
    answer = page.locator(".msg.assistant")
    await expect(answer).to_contain_text("…")  # the draft, while the model still streams
    await expect(answer).to_contain_text("that is all of the steps, done.")
    await expect(answer).not_to_contain_text("…")
    await expect(answer).to_have_count(1)  # edited in place, never a second bubble
    await expect(answer.locator("b")).to_have_text("the plan")
    await expect(answer.locator("pre code.language-python")).to_have_text("print('hi')")
    await expect(page.locator("#typing")).to_be_hidden()
    await expect(page.locator(".msg.user")).to_have_text("plan please")
    assert fake.requests[-1].stream


async def test_pressing_a_button_sends_its_choice(chat: Watched) -> None:
    page = chat.page
    await page.select_option("#agent", "menu")
    await say(page, "menu")
    buttons = page.locator(".msg.assistant .buttons button")
    await expect(buttons).to_have_count(2)
    await buttons.filter(has_text="Blue").click()
    await expect(page.locator(".msg.user.choice")).to_have_text("Blue")
    await expect(page.locator(".msg.assistant").last).to_have_text("You picked blue.")
    await expect(page.locator(".msg.assistant").last.locator("b")).to_have_text("blue")
    await expect(buttons.first).to_be_disabled()


async def test_stop_cancels_and_new_starts_over(chat: Watched, fake: FakeLLM) -> None:
    page = chat.page
    await say(page, "remember the word pelican")
    await expect(page.locator(".msg.assistant")).to_contain_text("echo: remember the word pelican")
    fake.latency_s = 8.0
    await say(page, "think very hard")
    await expect(page.locator("#typing")).to_be_visible()
    await page.click("#stop")
    await expect(page.locator(".msg.assistant").last).to_have_text("Stopped.")
    fake.latency_s = 0.0
    await page.click("#new")
    await expect(page.locator(".msg.assistant").last).to_contain_text("Started a new conversation")
    await say(page, "fresh start")
    await expect(page.locator(".msg.assistant").last).to_have_text("echo: fresh start")
    sent = [m["content"] for m in fake.requests[-1].messages if m["role"] != "system"]
    assert sent == ["fresh start"]  # nothing from before /new reached the model


async def test_a_model_fault_shows_the_failure_reply(chat: Watched, fake: FakeLLM) -> None:
    # a Retry-After the turn's deadline cannot wait out (a short one is waited out, not shown)
    fake.fail_next(Fault.rate_limited(retry_after=3600))
    await say(chat.page, "are you there?")
    await expect(chat.page.locator(".msg.assistant")).to_contain_text(
        "more requests than I can handle right now"
    )


async def test_a_dropped_connection_neither_loses_nor_doubles_a_reply(
    chat: Watched, daemon: Daemon, fake: FakeLLM
) -> None:
    page = chat.page
    fake.latency_s = 2.0
    fake.script("the answer that arrived while you were away")
    await say(page, "slow question")
    await expect(page.locator("#typing")).to_be_visible()
    # the operator restarts the channel: every event stream is cut mid-turn
    status, _ = await api(daemon, "POST", "/api/channels/webchat/restart", API_TOKEN)
    assert status == 200
    await expect(page.locator("#conn")).to_have_attribute("data-state", "offline")
    await expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    reply = page.locator(".msg.assistant", has_text="the answer that arrived while you were away")
    await expect(reply).to_have_count(1)
    shown = await page.locator(".msg").all_inner_texts()
    await page.reload()  # a fresh page replays the whole conversation from the outbox, once
    await expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    await expect(page.locator(".msg")).to_have_count(len(shown))
    assert await page.locator(".msg").all_inner_texts() == shown


async def test_pages_carry_no_console_errors(chat: Watched) -> None:
    await say(chat.page, "hello")
    await expect(chat.page.locator(".msg.assistant")).to_have_text("echo: hello")
    assert [line for line in chat.console if "error" in line.lower()] == []


async def test_files_picked_or_dropped_reach_the_model(chat: Watched, fake: FakeLLM) -> None:
    page = chat.page
    await expect(page.locator("#attach")).to_be_visible()
    picked = {"name": "shot.png", "mimeType": "image/png", "buffer": png()}
    await page.set_input_files("#file", files=[picked])
    await expect(page.locator("#attached .chip.ready")).to_have_text("📎 shot.png×")
    await say(page, "what is this?")
    await expect(page.locator(".msg.user").last).to_have_text("what is this?\n📎 shot.png")
    await expect(page.locator(".msg.assistant").last).to_contain_text("echo: what is this?")
    await expect(page.locator("#attached")).to_be_hidden()
    content = fake.requests[-1].messages[-1]["content"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
    await page.evaluate(
        """() => {
          const data = new DataTransfer();
          data.items.add(new File(["name,qty\\nbolts,4\\n"], "parts.csv", {type: "text/csv"}));
          document.body.dispatchEvent(new DragEvent("drop", {dataTransfer: data, bubbles: true}));
        }"""
    )
    await expect(page.locator("#attached .chip.ready")).to_have_text("📎 parts.csv×")
    await page.press("#input", "Enter")  # a file alone is a message
    await expect(page.locator(".msg.user").last).to_have_text("📎 parts.csv")
    await expect(page.locator(".msg.assistant").last).to_contain_text("bolts,4")
