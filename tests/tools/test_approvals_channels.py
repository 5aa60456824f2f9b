"""Tool approval on the other channels with buttons, end to end through each fake: Approve on
Discord (a button interaction; a stranger's press gets an ephemeral notice in their language),
on WhatsApp (an interactive reply button) and on the web chat (its press endpoint)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.channels.discord.support import discord_config
from tests.channels.telegram.helpers_b import settled
from tests.channels.webchat.sse import messages, read_events
from tests.channels.whatsapp.support import USER, webhook_url, whatsapp_config
from tests.fakes.discord_lite import FakeDiscord
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.fakes.whatsapp import FakeWhatsApp
from tests.harness import running, url, write_config
from tests.support.waiting import eventually
from tests.tools.test_approvals_chat import ASK_ADD, SERVERS, TIMEOUT

ADD = ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3}))
SEND = "POST /channels/{id}/messages"
EDIT = "PATCH /channels/{id}/messages/{id}"
FOLLOWUP = "POST /webhooks/{id}/{token}"
CHAT_TOKEN = "wc-7Hq2Lm9Xv4Rt8Kp1Zs6Yd3Nb5"


@pytest.fixture
async def lite_discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        fake.add_guild(5000, 4000, 4001)
        yield fake


def slower(config: Path) -> Path:
    """The agent's timeout_s raised (the first turn of a run pays the MCP server's start)."""
    config.write_text(config.read_text().replace("timeout_s: 10\n", "timeout_s: 60\n", 1))
    return config


async def test_discord_approve_interaction_runs_the_tool_and_a_strangers_press_is_told_so(
    tmp_path: Path, lite_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake = lite_discord
    config = slower(discord_config(tmp_path, fake, fake_llm, gateway=SERVERS, agents=ASK_ADD))
    fake_llm.script(ADD, "It is 5.")
    async with running(config) as gw:
        fake.post(4000, "what is 2+3?", guild_id=5000, mention=True)
        [prompt] = await fake.wait_for(SEND, timeout=TIMEOUT)
        approve, deny = prompt.json["components"][0]["components"]
        assert (approve["label"], deny["label"]) == ("Approve", "Deny")
        assert "fake.add" in prompt.json["content"]
        prompt_id = int(fake.created[0]["id"])

        stranger = fake.press(prompt_id, approve["custom_id"], user_id=3001, locale="de")
        [notice] = await fake.wait_for(FOLLOWUP, timeout=TIMEOUT)
        other = await settled(gw, f"discord:ix:{stranger['id']}")
        assert (other.stage, other.reason) == ("approval", "approval_not_approver")
        assert notice.json["flags"] & 64, "the notice is ephemeral"
        assert notice.json["content"] == "Nur die Person, die gefragt hat, kann das beantworten."
        assert len(fake_llm.requests) == 1, "a stranger's press resumed the turn"

        fake.press(prompt_id, approve["custom_id"])  # the asker
        # the status line goes out once approved, and the answer takes its place
        [_, status] = await fake.wait_for(SEND, 2, timeout=TIMEOUT)
        assert status.json["content"] == "using fake.add…"
        await fake.wait_for(EDIT, timeout=TIMEOUT, where=lambda c: "It is 5." in str(c.json))
        [closed] = await fake.wait_for(
            EDIT, timeout=TIMEOUT, where=lambda c: "approved by" in str(c.json)
        )
    assert closed.json["components"] == [], "the closed prompt keeps its buttons"
    assert fake_llm.requests[1].messages[-1] == {
        **fake_llm.requests[1].messages[-1],
        "role": "tool",
        "content": "5",
    }
    assert len(fake.calls_to(FOLLOWUP)) == 1  # the asker's press needs no notice


async def test_whatsapp_approve_reply_button_runs_the_tool(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    config = whatsapp_config(tmp_path, fake_wa, fake_llm, gateway=SERVERS)
    default = "api_key: sk-whatsapp-test\n    timeout_s: 10\n"
    config.write_text(config.read_text().replace(default, default.replace("10", "60") + ASK_ADD, 1))
    fake_llm.script(ADD, "It is 5.")
    async with running(config) as gw:
        hook = webhook_url(gw)
        await fake_wa.post(hook, fake_wa.message(USER, text="what is 2+3?"))
        [prompt] = await fake_wa.wait_sent(1, timeout=TIMEOUT)
        interactive = prompt["interactive"]
        assert interactive["type"] == "button" and "fake.add" in interactive["body"]["text"]
        approve, deny = interactive["action"]["buttons"]
        assert (approve["reply"]["title"], deny["reply"]["title"]) == ("Approve", "Deny")
        press = {"type": "button_reply", "button_reply": approve["reply"]}
        post = fake_wa.message(USER, "interactive", interactive=press, wamid="wamid.IN-yes")
        assert (await fake_wa.post(hook, post))[0] == 200
        sent = await fake_wa.wait_sent(3, timeout=TIMEOUT)
        entry = await settled(gw, "whatsapp:wamid.IN-yes")
    bodies = [m.get("text", {}).get("body", "") for m in sent[1:]]
    assert any("fake.add: approved by" in b for b in bodies)  # no edits: a new message
    assert "It is 5." in bodies
    assert (entry.stage, entry.reason) == ("approval", "approved")
    assert fake_llm.requests[1].messages[-1]["content"] == "5"


def webchat_config(tmp_path: Path, fake: FakeLLM) -> Path:
    return write_config(
        tmp_path,
        f"""{SERVERS}
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: sk-webchat-test
    timeout_s: 60
{ASK_ADD}channels:
  webchat: {{auth: token, token: {CHAT_TOKEN}, dm_policy: open}}
""",
    )


async def post(
    gw: Any, client: aiohttp.ClientSession, csrf: str, **body: str
) -> tuple[int, dict[str, Any]]:
    headers = {"X-CSRF-Token": csrf}
    async with client.post(url(gw, "/chat/api/send"), json=body, headers=headers) as r:
        return r.status, await r.json()


def buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        b
        for block in message.get("blocks", [])
        if block.get("type") == "buttons"
        for b in block["buttons"]
    ]


async def test_webchat_approve_press_runs_the_tool(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ADD, "It is 5.")
    async with (
        running(webchat_config(tmp_path, fake_llm)) as gw,
        aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as client,
    ):
        async with client.post(url(gw, "/chat/api/session"), json={"token": CHAT_TOKEN}) as r:
            csrf = str((await r.json())["csrf"])
        status, _ = await post(gw, client, csrf, client_id="client-0001", text="what is 2+3?")
        assert status == 202
        events_url = url(gw, "/chat/api/events")

        def prompted(events: list[tuple[str, Any]]) -> bool:
            return any(buttons_of(m) for m in messages(events).values())

        shown = messages(await read_events(client, events_url, prompted, timeout=TIMEOUT))
        [prompt] = [m for m in shown.values() if buttons_of(m)]
        approve, deny = buttons_of(prompt)
        assert (approve["label"], deny["label"]) == ("Approve", "Deny")
        status, body = await post(
            gw, client, csrf, client_id="client-0002", choice=approve["value"], label="Approve"
        )
        assert status == 202, body

        def answered(events: list[tuple[str, Any]]) -> bool:
            return any("It is 5." in str(m) for m in messages(events).values())

        final = messages(await read_events(client, events_url, answered, timeout=TIMEOUT))
        await eventually(
            lambda: len(fake_llm.requests) == 2, TIMEOUT, "the model hears the tool's result"
        )
    closed = final[prompt["id"]]
    assert "approved by" in str(closed) and not buttons_of(closed)
    assert fake_llm.requests[1].messages[-1]["content"] == "5"
