"""Files in web chat answers: a signed link per file, images previewed inline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.channels.discord.support import python_agent
from tests.channels.webchat.sse import messages, read_events
from tests.channels.webchat.test_http import CHAT_TOKEN, browser, send, sign_in
from tests.harness import running, url, write_config

AGENT = """
from chatgate.model.outbound import File, OutboundMessage, Text

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\\0" * 16

def agent(turn):
    return OutboundMessage((
        Text("Here you go"),
        File("chart.png", kind="image", caption="Q3", data=PNG),
        File("data.csv", "text/csv", data=b"a,b"),
    ))
"""


async def test_files_arrive_as_signed_links_and_images_as_previews(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = python_agent(tmp_path, monkeypatch, "webchat_files_agent", AGENT)
    config = write_config(
        tmp_path,
        f"""
agents:
{agents}
channels:
  webchat: {{auth: token, token: {CHAT_TOKEN}, dm_policy: open, agent: scripted}}
""",
    )
    async with running(config) as gw, browser() as client:
        csrf = await sign_in(gw, client)
        status, _ = await send(gw, client, csrf, client_id="client-file1", text="files")
        assert status == 202

        def answered(events: list[tuple[str, object]]) -> bool:
            return '"type": "file"' in json.dumps(messages(events))

        events = await read_events(client, url(gw, "/chat/api/events"), answered)
        [answer] = [m for m in messages(events).values() if m["role"] == "assistant"]
        image, csv = [b for b in answer["blocks"] if b["type"] == "file"]
        assert (image["name"], image["preview"], image["caption"]) == ("chart.png", True, "Q3")
        assert (csv["name"], csv["preview"], csv["size"]) == ("data.csv", False, "3 bytes")
        async with client.get(url(gw, image["url"])) as resp:
            assert resp.status == 200 and (await resp.read()).startswith(b"\x89PNG")
        async with client.get(url(gw, csv["url"])) as resp:
            assert await resp.read() == b"a,b"
            assert resp.headers["Content-Disposition"].startswith("attachment")
