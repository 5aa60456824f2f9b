"""`make run` on the shipped gateway.yaml: the web chat answers with the echo agent on loopback,
the dashboard is served, and `chatgate dashboard` prints a working sign-in link."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import aiohttp
import pytest

from tests.browser.support import stop_daemon
from tests.channels.webchat.sse import messages, read_events
from tests.daemon import ROOT, Daemon, run_cli

pytestmark = pytest.mark.slow


async def test_make_run_serves_the_web_chat_and_the_dashboard(tmp_path: Path) -> None:
    config = tmp_path / "gateway.yaml"
    shutil.copy(ROOT / "gateway.yaml", config)
    env = {"CHATGATE_PORT": "0", "CHATGATE_STATE_DIR": str(tmp_path / "state")}
    daemon = await Daemon(config, env=env).start()
    jar = aiohttp.CookieJar(unsafe=True)
    try:
        async with aiohttp.ClientSession(cookie_jar=jar) as browser:
            async with browser.get(daemon.base + "/chat/api/session") as r:
                assert await r.json() == {"signed_in": False, "auth": "open"}
            async with browser.post(daemon.base + "/chat/api/session", json={}) as r:
                who = await r.json()
            assert who["agents"] == ["echo", "default"]  # echo first: no model key needed
            body = {"client_id": "newcomer-1", "text": "hello from a newcomer"}
            headers = {"X-CSRF-Token": who["csrf"]}
            async with browser.post(
                daemon.base + "/chat/api/send", json=body, headers=headers
            ) as r:
                assert r.status == 202

            def echoed(events: list[tuple[str, object]]) -> bool:
                shown = json.dumps(list(messages(events).values()), ensure_ascii=False)
                return '"html": "hello from a newcomer"' in shown

            await read_events(browser, daemon.base + "/chat/api/events", echoed)
            async with browser.get(daemon.base + "/dashboard") as r:
                assert r.status == 200
        code, out, err = await run_cli("dashboard", "--config", str(config), env=env)
        assert code == 0, err
        link = out.strip()
        assert link.startswith(f"http://127.0.0.1:{daemon.port}/dashboard#token=")
        token = link.split("#token=", 1)[1]
        restart = f"{daemon.base}/api/channels/webchat/restart"
        async with aiohttp.ClientSession() as operator:
            async with operator.post(restart) as r:
                assert r.status == 401  # changing anything needs a token, even on loopback
            async with operator.post(restart, headers={"Authorization": f"Bearer {token}"}) as r:
                assert r.status == 200
    finally:
        await stop_daemon(daemon)
