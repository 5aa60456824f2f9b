"""Browser tests: Debian's Chromium driven by Playwright against a real `chatgate run`.

Nothing is downloaded: Playwright launches /usr/bin/chromium (`apt-get install chromium`,
which `.ci/run` does when it is missing). One browser and one daemon per module keep the
suite fast; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from playwright.async_api import Browser, BrowserContext, Page, Playwright, Response, expect

from tests.channels.webchat.sse import Event, messages, read_events
from tests.daemon import LIVE, ROOT, Daemon
from tests.fakes.telegram import TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram import FakeTelegram

CHROMIUM = os.environ.get("CHATGATE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 10_000
expect.set_options(timeout=WAIT_MS)


async def launch(playwright: Playwright) -> Browser:
    """Headless Chromium with a fresh profile (Playwright makes a temporary user-data-dir)."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(
            f"{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`)"
        )
    return await playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
    )


def telegram_section(tg: FakeTelegram) -> str:
    """The `telegram:` entry of `channels:` on the fake Bot API `tg`, open to DMs."""
    return (
        f'  telegram:\n    token: "{TELEGRAM_TOKEN}"\n'
        f"    api_base: {tg.base_url.removesuffix('/bot')}\n"
        "    poll_timeout_s: 1\n    request_timeout_s: 5\n    dm_policy: open"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def start_daemon(
    config: Path, env: Mapping[str, str] | None = None, *, log_name: str = "daemon.log"
) -> Daemon:
    """A `chatgate run` owned by the module (not killed after each test like other daemons)."""
    env = {"PYTHONPATH": str(ROOT), **(env or {})}
    daemon = await Daemon(config, env=env, log_name=log_name).start()
    assert daemon.proc is not None
    LIVE.remove(daemon.proc)
    return daemon


async def stop_daemon(daemon: Daemon, timeout: float = 30.0) -> None:
    """SIGTERM; once the gateway has logged `stopped` (drained, port and state released) the
    process is reaped. litellm's exit hook can keep a finished process alive for seconds more."""
    proc = daemon.proc
    assert proc is not None
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
    deadline = asyncio.get_running_loop().time() + timeout
    while proc.returncode is None and '"msg": "stopped"' not in daemon.logs():
        assert asyncio.get_running_loop().time() < deadline, daemon.logs()[-2000:]
        await asyncio.sleep(0.05)
    if proc.returncode is None:
        proc.kill()
    await proc.wait()
    assert '"msg": "stopped"' in daemon.logs(), daemon.logs()[-2000:]


async def warm_up(daemon: Daemon, chat_token: str, timeout: float = 90.0) -> None:
    """One web chat turn through the model agent, so litellm's first import (seconds on a busy
    machine) is paid here, under a generous bound, and not inside a test's 10 s waits."""
    await chat_turn(daemon, chat_token, "warm up", timeout=timeout)


async def chat_turn(
    daemon: Daemon, chat_token: str, text: str, *, timeout: float = 90.0, path: str = "/chat"
) -> None:
    """A web chat turn from a fresh visitor over the page's HTTP API, until it is answered."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as session:
        url = daemon.base + path
        async with session.post(url + "/api/session", json={"token": chat_token}) as r:
            csrf = (await r.json())["csrf"]
        body = {"client_id": "turn-" + os.urandom(6).hex(), "text": text}
        async with session.post(url + "/api/send", json=body, headers={"X-CSRF-Token": csrf}) as r:
            assert r.status == 202, await r.text()

        def answered(events: list[Event]) -> bool:
            return any(m["role"] == "assistant" for m in messages(events).values())

        await read_events(session, url + "/api/events", answered, timeout=timeout)


async def api(
    daemon: Daemon, method: str, path: str, token: str, body: object = None
) -> tuple[int, dict[str, object]]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, daemon.base + path, json=body, headers=headers) as r,
    ):
        return r.status, await r.json()


@dataclass
class Watched:
    """A page plus everything it logged and every (non-streaming) response it received."""

    page: Page
    context: BrowserContext
    console: list[str] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)

    async def everything(self) -> str:
        """The DOM, its text, the console and the responses, for secret checks."""
        dom = await self.page.content()
        text = await self.page.inner_text("body")
        return "\n".join([dom, text, *self.console, *self.bodies])


async def open_page(browser: Browser) -> Watched:
    context = await browser.new_context(viewport={"width": 1280, "height": 860})
    page = await context.new_page()
    page.set_default_timeout(WAIT_MS)
    watched = Watched(page, context)
    page.on("console", lambda message: watched.console.append(message.text))
    page.on("pageerror", lambda error: watched.console.append(f"pageerror: {error}"))

    async def keep(response: Response) -> None:
        if "event-stream" in (response.headers.get("content-type") or ""):
            return  # endless; its content is checked through the page and separately
        try:
            watched.bodies.append((await response.body()).decode("utf-8", "replace"))
        except Exception:  # the page navigated away before the body was read
            return

    page.on("response", keep)
    return watched


async def open_signed_in(browser: Browser, url: str, token: str) -> Watched:
    """A new browser session on the page at ``url``, signed in with ``token`` and live."""
    watched = await open_page(browser)
    page = watched.page
    await page.goto(url)
    await expect(page.locator("#signin")).to_be_visible()
    await page.fill("#token", token)
    await page.press("#token", "Enter")
    await expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    return watched


async def open_chat(browser: Browser, daemon: Daemon, token: str) -> Watched:
    return await open_signed_in(browser, daemon.base + "/chat", token)


async def open_dashboard(browser: Browser, daemon: Daemon, token: str) -> Watched:
    return await open_signed_in(browser, daemon.base + "/dashboard", token)


async def say(page: Page, text: str) -> None:
    await page.fill("#input", text)
    await page.press("#input", "Enter")


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)
