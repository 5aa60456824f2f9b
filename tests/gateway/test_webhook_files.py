"""Files in sync webhook answers: signed, expiring links served by the gateway itself."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from chatgate.channels.signatures import sign
from chatgate.media.links import FileLinks
from tests.channels.discord.support import python_agent
from tests.harness import http, running, url, write_config

SECRET = "whsec-files-secret"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\0" * 32
AGENT = """
from chatgate.model.outbound import File, OutboundMessage, Text

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\\0" * 32

def agent(turn):
    return OutboundMessage((
        Text("Report ready"),
        File("chart.png", kind="image", caption="Q3", data=PNG),
        File("page .html", "text/html", data=b"<script>alert(1)</script>"),
    ))
"""


def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    agents = python_agent(tmp_path, monkeypatch, "webhook_files_agent", AGENT)
    return write_config(
        tmp_path,
        f"""
agents:
{agents}
channels:
  webhook:
    routes:
      report:
        path: /hooks/report
        secret: {SECRET}
        signature: generic
        agent: scripted
        prompt: "report"
""",
    )


async def test_a_sync_answer_links_its_files_and_only_images_show_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = json.dumps({"x": 1}).encode()
    headers = {"Content-Type": "application/json", "X-Delivery-Id": "d-1"}
    async with running(config(tmp_path, monkeypatch)) as gw, http() as client:
        headers.update(sign("generic", SECRET, body, time.time()))
        async with client.post(url(gw, "/hooks/report"), data=body, headers=headers) as resp:
            assert resp.status == 200, await resp.text()
            answer = await resp.json()
        png, page = answer["files"]
        assert answer["reply"].startswith("Report ready")
        assert (png["name"], png["mime"], png["kind"], png["size"], png["caption"]) == (
            "chart.png",
            "image/png",
            "image",
            len(PNG),
            "Q3",
        )
        async with client.get(png["url"]) as resp:
            assert resp.status == 200 and await resp.read() == PNG
            assert resp.headers["Content-Type"] == "image/png"
            assert resp.headers["Content-Disposition"].startswith("inline")
        async with client.get(page["url"]) as resp:
            assert await resp.read() == b"<script>alert(1)</script>"
            assert resp.headers["Content-Type"] == "application/octet-stream"
            assert (
                resp.headers["Content-Disposition"] == "attachment; filename*=UTF-8''page%20.html"
            )
            assert "sandbox" in resp.headers["Content-Security-Policy"]
            assert resp.headers["X-Content-Type-Options"] == "nosniff"
        forged = png["url"].replace("type=image%2Fpng", "type=text%2Fhtml")
        guessed = png["url"][:-4] + "0000"
        for bad in (forged, guessed, png["url"].split("?")[0]):
            async with client.get(bad) as resp:
                assert resp.status == 404
        # The same delivery again answers from the journal, files included.
        async with client.post(url(gw, "/hooks/report"), data=body, headers=headers) as resp:
            again = await resp.json()
        assert [f["name"] for f in again["files"]] == ["chart.png", "page .html"]


def test_links_expire_and_are_bound_to_their_key(tmp_path: Path) -> None:
    links = FileLinks(tmp_path, ttl_s=60)
    links.load()
    path = links.path("a" * 32, "x.png", "image/png", now=1000)
    query = dict(p.split("=") for p in path.split("?")[1].split("&"))
    assert links.valid("a" * 32, "image/png", query["exp"], query["sig"], now=1059)
    assert not links.valid("a" * 32, "image/png", query["exp"], query["sig"], now=1061)
    assert not links.valid("b" * 32, "image/png", query["exp"], query["sig"], now=1000)
    other = FileLinks(tmp_path / "other")
    other.load()
    assert not other.valid("a" * 32, "image/png", query["exp"], query["sig"], now=1000)
    assert (tmp_path / "file-links.key").stat().st_mode & 0o777 == 0o600
