"""A web chat visitor's erase reaches the channel's own stores: the outbox of shown messages
(SQLite, compacted) leaves no trace of them in the state dir, another visitor's stays."""

from __future__ import annotations

import json
from pathlib import Path

from chatgate.gateway.app import Gateway
from tests.channels.webchat.sse import messages, read_events
from tests.channels.webchat.test_http import CHAT_TOKEN, browser, send, sign_in
from tests.harness import running, url, write_config
from tests.people.test_erase_canaries import api, files_with

CANARY, KEEP = "CANARYw3b1", "KEEPw3b2"


async def visit(gw: Gateway, text: str) -> str:
    """One visitor says ``text`` and sees the answer; returns their person address."""
    async with browser() as client:
        csrf = await sign_in(gw, client)
        status, body = await send(
            gw, client, csrf, client_id=f"client-{abs(hash(text)) % 10_000:04d}", text=text
        )
        assert status == 202

        def answered(events: list[tuple[str, object]]) -> bool:
            return any(
                m["role"] == "assistant"
                and f"echo: {text}" in json.dumps(m)
                and "…" not in json.dumps(m)
                for m in messages(events).values()
            )

        await read_events(client, url(gw, "/chat/api/events"), answered)
    entry = await gw.rt.state.journal.get(f"webchat:{body['message_id']}")
    assert entry is not None
    return f"webchat:{entry.message.sender_id}"


async def test_erasing_a_visitor_empties_their_outbox(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        f"""agents:
  default: {{backend: echo, prefix: "echo: "}}
channels:
  webchat: {{auth: token, token: {CHAT_TOKEN}, dm_policy: open}}
""",
    )
    async with running(config) as gw:
        alice = await visit(gw, f"{CANARY} hello")
        bob = await visit(gw, f"{KEEP} hello")
        shown = await api(gw, "GET", f"/api/people/show?person={alice}")
        assert shown["stores"]["webchat_outbox"]["count"] == 2  # their message and the answer
        await api(gw, "POST", "/api/people/erase", {"person": alice})
        assert files_with(gw.rt.state_dir, CANARY.encode()) == []
        assert any("webchat" in f for f in files_with(gw.rt.state_dir, KEEP.encode()))
        kept = await api(gw, "GET", f"/api/people/show?person={bob}")
        assert kept["stores"]["webchat_outbox"]["count"] == 2
