"""A configured secret the model passes to a tool (or a tool hands back) is masked where it is
written: the approval prompt, the trail, the journal, the transcript and every file in the state
dir; the model's answer that repeats it reaches the chat masked too."""

from __future__ import annotations

import sys
from pathlib import Path

from chatgate.state import admin
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.support.waiting import eventually
from tests.tools.conftest import ROOT

MCP_CANARY = "CANARY-mcp-env-secret-5d8e1f"
TIMEOUT = 60

SERVERS = f"""mcp_servers:
  fake:
    command: {sys.executable}
    args: [-m, tests.fakes.mcp_server, stdio]
    cwd: {ROOT}
    startup_timeout_s: 60
    env: {{FAKE_MCP_TAG: "{MCP_CANARY}"}}
"""
AGENT = """    tools:
      allow: [fake.echo, fake.whoami]
      approval: {"fake.echo": ask}
"""


def leaks(data: bytes) -> bool:
    return MCP_CANARY.encode() in data or MCP_CANARY.lower().encode() in data.lower()


async def test_a_configured_secret_is_masked_in_prompt_trail_journal_and_state_dir(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(
        tmp_path, fake_tg, fake_llm, gateway=SERVERS, agent=AGENT, channel="    dm_policy: open"
    )
    config.write_text(config.read_text().replace("timeout_s: 10\n", "timeout_s: 60\n", 1))
    fake_llm.script(
        ToolCalls.of(ToolCall("fake__echo", {"text": f"the key is {MCP_CANARY}"})),
        ToolCalls.of(ToolCall("fake__whoami", {})),  # answers with the canary from its env
        f"Your key is {MCP_CANARY}.",
    )
    async with running(config) as gw:
        fake_tg.dm(42, "what is my key?")
        [prompt] = await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        markup = prompt.params["reply_markup"]["inline_keyboard"]
        fake_tg.callback(42, 42, fake_tg.sent[0]["message_id"], markup[0][0]["callback_data"])
        await fake_llm.wait_for_requests(3, timeout=TIMEOUT)

        def answered() -> bool:
            sent = fake_tg.calls_of("sendMessage") + fake_tg.calls_of("editMessageText")
            return any("Your key is" in c.params["text"] for c in sent)

        await eventually(answered, TIMEOUT, "the answer")
        why = await admin.why(gw.rt.state, "telegram", None, "42")
        state_dir = gw.rt.state_dir

    assert "the key is" in prompt.params["text"] and not leaks(prompt.params["text"].encode())
    seen = fake_llm.requests[2].messages[-1]["content"]  # the tool saw it; the model does not
    assert "tag=**********" in seen and not leaks(seen.encode())
    chat = fake_tg.calls_of("sendMessage") + fake_tg.calls_of("editMessageText")
    assert [c.params["text"] for c in chat if leaks(c.params["text"].encode())] == []
    trail = [t for t in why["trails"] if t.get("tools")]
    assert trail and not leaks(repr(why).encode())
    files = [p for p in state_dir.rglob("*") if p.is_file()]
    assert files and [str(p) for p in files if leaks(p.read_bytes())] == []
