"""Webhook routes that take files: base64 in the signed body, or URLs only from the hosts the
route allow-lists (another host, or a redirect, is never fetched)."""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web

from chatgate.channels.signatures import sign
from chatgate.channels.webhook.media import DECODE_CHUNK, decode_to_file
from chatgate.model.errors import FetchError
from chatgate.model.reasons import MediaReason
from tests.fakes.llm import FakeLLM
from tests.harness import http, running, url, write_config

SECRET = "whsec-media-secret-value"


@asynccontextmanager
async def file_host() -> AsyncIterator[tuple[int, list[str]]]:
    """A plain HTTP file server on 127.0.0.1: /report.txt, and /moved redirecting to it."""
    seen: list[str] = []

    async def serve(request: web.Request) -> web.StreamResponse:
        seen.append(request.path)
        if request.path == "/moved":
            raise web.HTTPFound("/report.txt")
        return web.Response(text="uptime 99.9%\n", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/{name}", serve)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1], seen
    finally:
        await runner.cleanup()


def _config(tmp_path: Path, llm: FakeLLM) -> Path:
    return write_config(
        tmp_path,
        f"""
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {llm.base_url}
    api_key: sk-webhook-media
    timeout_s: 10
channels:
  webhook:
    routes:
      reports:
        path: /hooks/reports
        secret: {SECRET}
        prompt: "{{payload.note}}"
        attachments: {{field: payload.files, allow_hosts: [127.0.0.1]}}
""",
    )


async def test_base64_and_allow_listed_urls_are_read_other_hosts_and_redirects_are_not(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with file_host() as (port, seen):
        files = [
            {
                "base64": base64.b64encode(b"a,b\n1,2\n").decode(),
                "name": "t.csv",
                "mime": "text/csv",
            },
            {"url": f"http://127.0.0.1:{port}/report.txt", "name": "report.txt"},
            {"url": f"http://localhost:{port}/report.txt", "name": "elsewhere.txt"},
            {"url": f"http://127.0.0.1:{port}/moved", "name": "moved.txt"},
        ]
        body = json.dumps({"note": "summarise", "files": files}).encode()
        headers = {"Content-Type": "application/json"}
        headers.update(sign("generic", SECRET, body, time.time()))
        async with running(_config(tmp_path, fake_llm)) as gw, http() as client:
            response = await client.post(url(gw, "/hooks/reports"), data=body, headers=headers)
            assert response.status == 200
            data = await response.json()
    assert seen == [
        "/report.txt",
        "/moved",
        "/moved",
    ]  # localhost never asked; no redirect followed
    text = str(fake_llm.requests[0].last_user_text)
    assert text.startswith(
        "summarise\n\n[document: t.csv]\na,b\n1,2\n\n[document: report.txt]\nuptime"
    )
    assert "[file not available (media_download_failed): elsewhere.txt" in text
    assert "moved.txt could not be downloaded" in data["reply"]
    assert "elsewhere.txt could not be downloaded" in data["reply"]


@pytest.mark.parametrize("size", [0, 1, 2, 3, DECODE_CHUNK * 3 // 4 * 3 + 2])
def test_inline_base64_is_decoded_to_disk_in_chunks(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    dest = tmp_path / "f"
    assert decode_to_file(base64.b64encode(data).decode(), dest, size) == size
    assert dest.read_bytes() == data


@pytest.mark.parametrize(
    ("text", "limit", "reason"),
    [
        (base64.b64encode(b"x" * 10).decode(), 9, MediaReason.TOO_LARGE),
        ("abc", 100, MediaReason.CORRUPT),
        ("a" * DECODE_CHUNK + "ab!=", 10**6, MediaReason.CORRUPT),  # bad in a later chunk
    ],
)
def test_inline_base64_over_the_limit_or_invalid_is_refused(
    tmp_path: Path, text: str, limit: int, reason: MediaReason
) -> None:
    with pytest.raises(FetchError) as err:
        decode_to_file(text, tmp_path / "f", limit)
    assert err.value.reason is reason
    if reason is MediaReason.TOO_LARGE:
        assert not (tmp_path / "f").exists()  # refused before anything is written
