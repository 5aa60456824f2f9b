"""Configured secrets never reach the model: every secret field holds a canary; a tool echoes its
environment, a tool error quotes a URL with the bot token, the model passes a token to a tool that
needs approval, a user sends a document holding the model key. No canary in any request the fake
model receives, in any message shown in the chat (the approval prompt included), in `why`, or
anywhere in the state dir."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from chatgate.state import admin
from tests.channels.telegram.support import api_base
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.fakes.telegram import FakeTelegram
from tests.harness import fake_model_config, running
from tests.support.waiting import eventually
from tests.tools.conftest import ROOT

BOT_TOKEN = "918273645:CANARYmodelBotTokenQwErTy0123456789ab"
MODEL_KEY = "sk-CANARY-model-key-c0ffee1234"
MCP_SECRET = "CANARY-mcp-env-value-8e2d4a"
CANARIES = (BOT_TOKEN, MODEL_KEY, MCP_SECRET)
TIMEOUT = 60


def found(text: str) -> list[str]:
    lowered = text.lower()
    return [c for c in CANARIES if c.lower() in lowered]


def config_for(tmp_path: Path, tg: FakeTelegram, llm: FakeLLM) -> Path:
    servers = f"""mcp_servers:
  fake:
    command: {sys.executable}
    args: [-m, tests.fakes.mcp_server, stdio]
    cwd: {ROOT}
    startup_timeout_s: 60
    env: {{FAKE_MCP_SECRET: "{MCP_SECRET}"}}
"""
    agent = """    tools:
      allow: [fake.echo, fake.whoami, fake.fail]
      approval: {"fake.echo": ask}
"""
    channel = f"""  telegram:
    token: "{BOT_TOKEN}"
    api_base: {api_base(tg)}
    poll_timeout_s: 1
    request_timeout_s: 5
    dm_policy: open
"""
    path = fake_model_config(tmp_path, llm, channel, head=servers, agents=agent, api_key=MODEL_KEY)
    path.write_text(path.read_text().replace("timeout_s: 10\n", "timeout_s: 60\n", 1))
    return path


async def test_no_configured_secret_reaches_the_model_the_chat_or_the_state_dir(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    leaked_url = f"GET https://api.telegram.org/bot{BOT_TOKEN}/getMe answered 401"
    fake_llm.script(
        ToolCalls.of(
            ToolCall("fake__whoami", {"variable": "FAKE_MCP_SECRET"}),  # echoes its env
            ToolCall("fake__fail", {"message": leaked_url}),  # an error quoting the token
        ),
        ToolCalls.of(ToolCall("fake__echo", {"text": f"key {MODEL_KEY}"})),  # shown for approval
        "checked",
        "read it",
    )
    async with FakeTelegram(token=BOT_TOKEN) as tg:
        config = config_for(tmp_path, tg, fake_llm)
        async with running(config) as gw:
            tg.dm(42, "check my setup")
            [prompt] = await tg.wait_for(
                "sendMessage", timeout=TIMEOUT, where=lambda c: "reply_markup" in c.params
            )
            markup = prompt.params["reply_markup"]["inline_keyboard"]
            asked = next(m for m in tg.sent if m.get("reply_markup"))
            tg.callback(42, 42, asked["message_id"], markup[0][0]["callback_data"])
            await fake_llm.wait_for_requests(3, timeout=TIMEOUT)

            def said(text: str) -> bool:
                sent = tg.calls_of("sendMessage") + tg.calls_of("editMessageText")
                return any(text in c.params["text"] for c in sent)

            await eventually(lambda: said("checked"), TIMEOUT, "the first answer")
            tg.files.add("doc-1", f"deploy notes\nOPENAI key: {MODEL_KEY}\n".encode(), ext="txt")
            document = {
                "file_id": "doc-1",
                "file_unique_id": "d1",
                "file_name": "notes.txt",
                "mime_type": "text/plain",
            }
            tg.media_message(42, "document", document, caption="read this")
            await fake_llm.wait_for_requests(4, timeout=TIMEOUT)
            await eventually(lambda: said("read it"), TIMEOUT, "the second answer")
            why = await admin.why(gw.rt.state, "telegram", None, "42")
            state_dir = gw.rt.state_dir
        chat = [c.params for c in tg.calls]

    requests = [json.dumps([r.messages, r.body.get("tools")]) for r in fake_llm.requests]
    # the paths were driven: the tool results, the error and the document reached the model
    assert "FAKE_MCP_SECRET=**********" in requests[1]
    assert "getMe answered 401" in requests[1]
    assert "OPENAI key: **********" in requests[3]
    assert "key ***" in prompt.params["text"] or "key **********" in prompt.params["text"]
    assert [i for i, r in enumerate(requests) if found(r)] == []
    assert [c for c in chat if found(json.dumps(c))] == []
    assert why["trails"] and found(json.dumps(why, default=str)) == []
    files = [p for p in state_dir.rglob("*") if p.is_file()]
    leaking = [p for p in files if found(p.read_bytes().decode("utf-8", errors="replace"))]
    assert files and leaking == []
