"""Web chat across two real `chatgate run` replicas on one Redis, in headless Chromium.

One browser, its cookie issued by replica A: the page on replica B is signed in with it, a message
sent on A streams its answer live into B's page, and reloading B replays the conversation.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from tests.browser.support import open_chat, open_page, say, start_daemon, stop_daemon
from tests.daemon import Daemon
from tests.harness import write_config
from tests.redis.conftest import redis_db  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.asyncio(loop_scope="module")]
CHAT_TOKEN = "wc-R7p2Qm9Xv4Lt1Kz8Ns5Yd3Hb6"


def replica(tmp_path: Path, name: str, url: str) -> Path:
    return write_config(
        tmp_path / name,
        f"""  store: {{backend: redis, url: '{url}', key_prefix: 'wcr:'}}
  turn_lock: {{backend: redis}}
  redis: {{replica_id: {name}}}
agents:
  default: {{backend: echo, prefix: "re: ", delay_s: 0.3}}
channels:
  webchat:
    auth: token
    token: {CHAT_TOKEN}
    dm_policy: open
""",
    )


async def test_any_replica_serves_one_conversation(
    browser: Browser,
    tmp_path: Path,
    redis_db: str,  # noqa: F811
) -> None:
    daemons: list[Daemon] = []
    try:
        for name in ("a", "b"):
            daemons.append(await start_daemon(replica(tmp_path, name, redis_db)))
        a, b = daemons
        on_a = await open_chat(browser, a, CHAT_TOKEN)  # the cookie comes from replica A
        page_b = await on_a.context.new_page()  # same browser: same cookie, other replica
        await page_b.goto(b.base + "/chat")
        await expect(page_b.locator("#conn")).to_have_attribute("data-state", "live")
        await expect(page_b.locator("#signin")).to_be_hidden()

        await say(on_a.page, "hello from A")
        answer_b = page_b.locator(".msg.assistant")
        await expect(answer_b).to_have_text("re: hello from A")  # relayed live to B's stream
        await expect(page_b.locator(".msg.user")).to_have_text("hello from A")

        await page_b.reload()  # B replays the conversation from the shared outbox
        await expect(page_b.locator("#conn")).to_have_attribute("data-state", "live")
        await expect(page_b.locator(".msg.user")).to_have_text("hello from A")
        await expect(page_b.locator(".msg.assistant")).to_have_text("re: hello from A")

        stranger = await open_page(browser)  # another browser has its own conversation
        await stranger.page.goto(b.base + "/chat")
        await expect(stranger.page.locator("#signin")).to_be_visible()
        await stranger.context.close()
        await on_a.context.close()
    finally:
        for daemon in daemons:
            await stop_daemon(daemon)
