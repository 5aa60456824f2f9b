"""The operator dashboard in a real headless Chromium against a real `chatgate run`.

The daemon starts with a revoked Telegram token (the channel parks with its fix), a webhook
route, and web chat under pairing. Tests run in file order on one worker: the last one restarts
the daemon under both pages.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from chatgate.channels.signatures import sign
from tests.browser.support import (
    Watched,
    api,
    free_port,
    open_chat,
    open_dashboard,
    open_page,
    say,
    start_daemon,
    stop_daemon,
    telegram_section,
)
from tests.channels.webchat.sse import read_events
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram import FakeTelegram, FaultSpec
from tests.harness import fake_agent, over_http, write_config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
]
API_TOKEN = "Dq7vN2kLp4Rt9Wx1Yc5Bm8Hd3Gf6Js0Z"
CHAT_TOKEN = "wc-canary-Pz4Lm9Xv2Rt7Kq1Ns8Yd5"
LLM_KEY = "sk-canary-llm-key-5f3e2d1c0b9a"
HOOK_SECRET = "whsec-canary-8a7b6c5d4e3f2a1b"
CANARIES = (API_TOKEN, CHAT_TOKEN, LLM_KEY, HOOK_SECRET, TELEGRAM_TOKEN)
BEARER = {"Authorization": f"Bearer {API_TOKEN}"}


@dataclass
class Setup:
    daemon: Daemon
    config: Path
    tg: FakeTelegram
    llm: FakeLLM

    async def restart(self) -> None:
        """SIGTERM the daemon and start a new one on the same port and state directory."""
        await stop_daemon(self.daemon)
        self.daemon = await start_daemon(self.config, log_name="daemon-restarted.log")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Setup]:
    async with FakeLLM() as llm, FakeTelegram() as tg:
        tg.revoke_token()
        config = write_config(
            tmp_path_factory.mktemp("dashboard-page"),
            f"""  api_token: {API_TOKEN}
{fake_agent(over_http(llm), LLM_KEY, 20)}
  echo: {{backend: echo, prefix: "echo: "}}
channels:
{telegram_section(tg)}
  discord: {{dm_policy: open}}
  webchat: {{auth: token, token: {CHAT_TOKEN}, dm_policy: pairing, agent: echo}}
  webhook:
    routes:
      warm: {{path: /hooks/warm, secret: {HOOK_SECRET}, prompt: "{{payload.text}}"}}
""",
        )
        # a fixed port, so a restarted daemon is found where the pages left it
        config.write_text(config.read_text().replace("port: 0", f"port: {free_port()}"))
        daemon = await start_daemon(config)
        state = Setup(daemon, config, tg, llm)
        try:
            await warm_up(daemon)
            yield state
        finally:
            await stop_daemon(state.daemon)


async def warm_up(daemon: Daemon) -> None:
    """A webhook turn: the first is slower (its agent session opens), so a generous bound."""
    body = json.dumps({"text": "warm up"}).encode()
    headers = {"Content-Type": "application/json", "X-Request-Id": "warm-up"}
    headers.update(sign("generic", HOOK_SECRET, body, time.time()))
    timeout = aiohttp.ClientTimeout(total=90)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.post(daemon.base + "/hooks/warm", data=body, headers=headers) as r,
    ):
        assert r.status == 200 and (await r.json())["reply"] == "echo: warm up"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def board(browser: Browser, setup: Setup) -> AsyncIterator[Watched]:
    """One signed-in dashboard for the whole module: it must follow everything live."""
    watched = await open_dashboard(browser, setup.daemon, API_TOKEN)
    await watched.page.evaluate("window.neverReloaded = true")
    try:
        yield watched
    finally:
        await watched.context.close()


async def test_without_the_token_the_api_says_401_and_the_page_shows_nothing(
    browser: Browser, setup: Setup
) -> None:
    watched = await open_page(browser)
    page = watched.page
    try:
        base = setup.daemon.base
        for path in ("/api/status", "/api/stream", "/api/dlq", "/api/pairing", "/api/stats"):
            assert (await page.request.get(base + path)).status == 401, path
        assert (await page.request.post(base + "/api/dlq/1/replay")).status == 401
        assert (await page.request.post(base + "/api/channels/telegram/restart")).status == 401
        await page.goto(base + "/dashboard")
        await expect(page.locator("#signin")).to_be_visible()
        await page.fill("#token", "not-the-operator-token-at-all-0000")
        await page.press("#token", "Enter")
        await expect(page.locator("#signin-error")).to_contain_text("refused")
        await expect(page.locator("#board")).to_be_hidden()
        assert "telegram" not in await page.inner_text("body")
    finally:
        await watched.context.close()


async def test_a_parked_channel_shows_its_fix_and_recovers_live(
    board: Watched, setup: Setup
) -> None:
    row = board.page.locator('#channels tr[data-channel="telegram"]')
    setup.tg.revoke_token()  # parked since the start; parked again if another test revived it
    await api(setup.daemon, "POST", "/api/channels/telegram/restart", API_TOKEN)
    await expect(row).to_contain_text("parked")
    await expect(row).to_contain_text("get a new one from @BotFather")
    await expect(board.page.locator('#degraded li[data-owner="channel:telegram"]')).to_be_visible()
    setup.tg.restore_token()
    status, _ = await api(setup.daemon, "POST", "/api/channels/telegram/restart", API_TOKEN)
    assert status == 200  # from outside the page: the page learns it from the stream
    await expect(row).to_contain_text("running")
    await expect(row).not_to_contain_text("@BotFather")
    await expect(board.page.locator("#degraded")).to_contain_text("none")
    assert await board.page.evaluate("window.neverReloaded") is True


async def test_the_breaker_is_armed_and_an_unconfigured_channel_offers_no_restart(
    board: Watched,
) -> None:
    discord = board.page.locator('#channels tr[data-channel="discord"]')
    await expect(discord).to_contain_text("not configured")
    await expect(discord).to_contain_text("token")  # its hint: what to set
    await expect(discord.locator("button")).to_have_count(0)
    await expect(board.page.locator("#breaker")).to_contain_text("armed")
    await expect(board.page.locator("#breaker")).not_to_contain_text("closed")


async def test_dlq_replay_from_the_page_delivers(board: Watched, setup: Setup) -> None:
    page, tg = board.page, setup.tg
    tg.restore_token()  # tests may run in any order
    await api(setup.daemon, "POST", "/api/channels/telegram/restart", API_TOKEN)
    await expect(page.locator('#channels tr[data-channel="telegram"]')).to_contain_text("running")
    tg.fail("sendMessage", FaultSpec(403, "Forbidden: bot was blocked by the user"))
    update = tg.dm(4242, "hello bot")
    entry = page.locator("#dlq tr[data-dlq]")
    await expect(entry).to_have_count(1)
    await expect(entry).to_contain_text("telegram:4242")
    await expect(entry).to_contain_text("forbidden")
    await entry.locator("button", has_text="Replay").click()
    await expect(page.locator("#toast")).to_contain_text("sent")
    calls = await tg.wait_for(
        "sendMessage", where=lambda c: c.params.get("text") == "echo: hello bot"
    )
    assert calls[-1].params["chat_id"] == 4242
    await expect(entry).to_have_count(0)
    # why: the decision trail of that message, by channel and message id
    message_id = f"4242:{update['message']['message_id']}"
    await page.select_option("#why-channel", "telegram")
    await page.fill("#why-id", message_id)
    await page.click("#why button")
    await expect(page.locator("#why-result")).to_contain_text("delivery dead_target, in DLQ")


async def test_pairing_is_approved_from_the_page(
    browser: Browser, board: Watched, setup: Setup
) -> None:
    chat = await open_chat(browser, setup.daemon, CHAT_TOKEN)
    try:
        await say(chat.page, "let me in")
        notice = chat.page.locator(".msg.assistant").last
        await expect(notice).to_contain_text("send this code")
        code = re.search(r"\b([A-Z0-9]{8})\b", await notice.inner_text())
        assert code is not None
        row = board.page.locator(f'#pairing tr[data-code="{code.group(1)}"]')
        await expect(row).to_contain_text("webchat")
        await row.locator("button", has_text="Approve").click()
        await expect(chat.page.locator(".msg.assistant").last).to_contain_text(
            "You now have access"
        )
        await expect(row).to_have_count(0)
        await say(chat.page, "thanks")
        await expect(chat.page.locator(".msg.assistant").last).to_have_text("echo: thanks")
        await expect(board.page.locator("#turns-legend")).to_contain_text("text")
        assert await board.page.locator("#turns-chart rect").count() >= 1
    finally:
        await chat.context.close()


async def test_a_job_is_listed_paused_and_run_from_the_page(board: Watched, setup: Setup) -> None:
    page = board.page
    job = {
        "id": "digest",
        "every_s": 86400,
        "prompt": "digest",
        "agent": "echo",
        "deliver": {"to": "telegram:4243"},
    }
    status, _ = await api(setup.daemon, "POST", "/api/jobs", API_TOKEN, job)
    assert status == 201
    row = page.locator('#jobs tr[data-job="digest"]')
    await expect(row).to_contain_text("every 86400s")
    await expect(row).to_contain_text("never ran")
    await row.locator("button", has_text="Pause").click()
    await expect(row).to_contain_text("paused")
    await row.locator("button", has_text="Run now").click()
    await expect(page.locator("#toast")).to_contain_text("job digest ran")
    await expect(row).to_contain_text("run_now")


async def test_a_person_is_shown_exported_and_erased_from_the_page(board: Watched) -> None:
    page = board.page
    await page.fill("#people-person", "discord:someone")
    await page.locator("#people button", has_text="Show").click()
    await expect(page.locator('#people-result li[data-store="journal"]')).to_have_text("journal: 0")
    async with page.expect_download() as download:
        await page.locator("#people-export").click()
    assert (await download.value).suggested_filename == "chatgate-person-discord_someone.tar.gz"
    page.once("dialog", lambda dialog: dialog.accept())
    await page.locator("#people-erase").click()
    await expect(page.locator("#toast")).to_contain_text("erased discord:someone")
    audit = page.locator("#privacy tbody tr", has_text="discord:someone")
    await expect(audit.filter(has_text="erased")).to_have_count(1)
    await expect(audit.filter(has_text="exported")).to_have_count(1)


async def test_no_secret_reaches_either_page(browser: Browser, setup: Setup) -> None:
    chat = await open_chat(browser, setup.daemon, CHAT_TOKEN)
    dashboard = await open_dashboard(browser, setup.daemon, API_TOKEN)
    try:
        await say(chat.page, "anything secret?")
        await expect(chat.page.locator(".msg.assistant").last).to_be_visible()
        await expect(dashboard.page.locator("#channels tbody tr")).to_have_count(4)
        seen = [await chat.everything(), await dashboard.everything()]
        async with aiohttp.ClientSession() as session:  # the streams themselves, too
            events = await read_events(
                session, setup.daemon.base + "/api/stream", lambda ev: True, headers=BEARER
            )
            seen.append(json.dumps(events))
            async with session.get(setup.daemon.base + "/api/status", headers=BEARER) as r:
                seen.append(await r.text())
        everything = "\n".join(seen)
        assert "webchat" in everything and "telegram" in everything
        for secret in CANARIES:
            assert secret not in everything, secret
        assert await chat.page.input_value("#token") == ""
        assert await dashboard.page.input_value("#token") == ""
    finally:
        await chat.context.close()
        await dashboard.context.close()


async def test_both_pages_ride_out_a_daemon_restart(
    browser: Browser, board: Watched, setup: Setup
) -> None:
    chat = await open_chat(browser, setup.daemon, CHAT_TOKEN)  # a new visitor: pairing notices
    try:
        page = chat.page
        await say(page, "before the restart")
        await expect(page.locator(".msg.assistant").last).to_be_visible()
        shown = await page.locator(".msg").count()
        await setup.restart()
        await expect(board.page.locator("#banner")).to_contain_text("restarted")
        await expect(board.page.locator("#conn")).to_have_attribute("data-state", "live")
        await expect(page.locator("#conn")).to_have_attribute("data-state", "live")
        await expect(page.locator(".msg")).to_have_count(shown)  # the history survived
        await say(page, "after the restart")
        await expect(page.locator(".msg")).to_have_count(shown + 2)
        assert await board.page.evaluate("window.neverReloaded") is True
    finally:
        await chat.context.close()
