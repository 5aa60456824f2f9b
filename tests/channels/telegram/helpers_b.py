"""Helpers for the Telegram unit and end-to-end tests: parse fake updates, wait on gateway state."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from telegram import Bot, Update

from chatgate.channels.telegram.inbound import BotIdentity, Ignored, normalize
from chatgate.gateway.app import Gateway
from chatgate.model.messages import InboundMessage
from chatgate.state.records import TERMINAL, JournalEntry
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import BOT_ID, BOT_USERNAME, TOKEN, Call, FakeTelegram
from tests.support.waiting import eventually

ME = BotIdentity(BOT_ID, BOT_USERNAME)
_BOT = Bot(TOKEN)  # never initialised: only gives de_json a bot to attach


def parse(update: dict[str, Any]) -> InboundMessage | Ignored:
    """Run a raw update dict through PTB's own parser and then our normaliser."""
    parsed = Update.de_json(update, _BOT)
    assert parsed is not None
    return normalize(parsed, ME, "telegram")


def inbound(update: dict[str, Any]) -> InboundMessage:
    result = parse(update)
    assert isinstance(result, InboundMessage), result
    return result


def key_of(update: dict[str, Any]) -> str:
    """The journal key the gateway files a fake message update under."""
    message = update.get("message") or update["channel_post"]
    return f"telegram:{message['chat']['id']}:{message['message_id']}"


async def settled(gw: Gateway, key: str, timeout: float = 10.0) -> JournalEntry:
    """The journal entry for `key` once it reached a terminal state."""

    async def probe() -> JournalEntry | None:
        entry = await gw.rt.journal.get(key)
        return entry if entry is not None and entry.state in TERMINAL else None

    result: JournalEntry = await eventually(probe, timeout=timeout)
    return result


def telegram_section(gw: Gateway) -> dict[str, Any]:
    snapshot = {c["name"]: c for c in gw.channels.snapshot()}
    return snapshot["telegram"]


def platform_calls(fake: FakeTelegram, since: int = 0) -> list[Call]:
    """Requests to the Bot API after index `since`, long polls excluded."""
    return [c for c in fake.calls[since:] if c.method.lower() != "getupdates"]


def python_agent_config(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tg: FakeTelegram,
    llm: FakeLLM,
    *,
    module: str,
    source: str,
    channel: str = "    dm_policy: open",
) -> Path:
    """A config whose telegram channel talks to `module:agent`, a file written into tmp_path."""
    code_dir = tmp_path / "agents"
    code_dir.mkdir(exist_ok=True)
    (code_dir / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.syspath_prepend(str(code_dir))
    agent = f"""  scripted:
    backend: python
    function: {module}:agent
"""
    return telegram_config(
        tmp_path, tg, llm, agent=agent, channel=f"{channel}\n    agent: scripted"
    )
