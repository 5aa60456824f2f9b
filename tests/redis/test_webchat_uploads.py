"""Web chat uploads are off on the Redis backend, and the page and the endpoint say so."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from tests.channels.webchat.test_http import CHAT_TOKEN, browser, sign_in
from tests.harness import running, url, write_config

pytestmark = pytest.mark.redis


async def test_uploads_are_refused_with_the_reason_on_redis(tmp_path: Path, redis_db: str) -> None:
    config = write_config(
        tmp_path,
        f"""  store: {{backend: redis, url: '{redis_db}', key_prefix: 'cg:'}}
agents:
  default: {{backend: echo, prefix: "echo: "}}
channels:
  webchat: {{auth: token, token: {CHAT_TOKEN}, dm_policy: open}}
""",
    )
    async with running(config) as gw, browser() as client:
        csrf = await sign_in(gw, client)
        async with client.get(url(gw, "/chat/api/session")) as r:
            assert (await r.json())["max_upload_bytes"] == 0  # the page hides the button
        form = aiohttp.FormData()
        form.add_field("file", b"hello", filename="a.txt", content_type="text/plain")
        headers = {"X-CSRF-Token": csrf}
        async with client.post(url(gw, "/chat/api/upload"), data=form, headers=headers) as r:
            assert r.status == 403
            assert "Redis" in (await r.json())["error"]
        body = {"client_id": "redis-0001", "text": "hi", "attachments": ["a" * 24]}
        async with client.post(url(gw, "/chat/api/send"), json=body, headers=headers) as r:
            assert r.status == 400 and "Redis" in (await r.json())["error"]
