"""A human takes over a Telegram chat, end to end through the real PTB, the fake Bot API and the
fake model: pause (CLI, API, `/bot off`), messages kept as context and not answered, the
operator's reply delivered and kept as the assistant's (human) line, resume, and the next turn's
model request carrying both."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from chatgate.cli.main import main
from chatgate.gateway.app import Gateway
from chatgate.model.text_ids import TextId
from chatgate.texts import LANGUAGES
from tests.channels.telegram.support import telegram_config
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import http, operator, running, url

OPERATOR, CUSTOMER, GROUP = 7, 42, -1001
EN = LANGUAGES["en"]
# A bound on waits for an answer: the first model turn of a worker pays litellm's import.
ANSWER_S = 60


async def cli(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, str]:
    """`chatgate chats ...` in a worker thread; it finds the daemon through the state dir."""
    cli_config = path.parent / "cli.yaml"
    cli_config.write_text(f"config_version: 1\ngateway:\n  state_dir: {path.parent / 'state'}\n")

    def call() -> int:
        try:
            return main(["chats", *args, "--config", str(cli_config)])
        except SystemExit as exc:
            return int(exc.code or 0)

    code = await asyncio.to_thread(call)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


async def api(gw: Gateway, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    async with http() as client:
        if body is None:
            async with client.get(url(gw, path), headers=operator(gw)) as resp:
                return dict(await resp.json())
        async with client.post(url(gw, path), json=body, headers=operator(gw)) as resp:
            return dict(await resp.json()) | {"http_status": resp.status}


async def settled(gw: Gateway, sender: str, count: int) -> list[Any]:
    """The sender's journal entries once ``count`` of them are finished, newest first."""
    found: list[Any] = []

    async def poll() -> bool:
        nonlocal found
        found = await gw.rt.journal.find("telegram", sender_id=sender, limit=20)
        return sum(e.state.value in ("done", "dropped") for e in found) >= count

    deadline = time.monotonic() + ANSWER_S
    while not await poll():
        assert time.monotonic() < deadline, f"journal of {sender}: {found}"
        await asyncio.sleep(0.02)
    return found


def config(tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, gateway: str = "") -> Path:
    return telegram_config(
        tmp_path,
        tg,
        llm,
        gateway=f"  operators: ['telegram:{OPERATOR}']\n{gateway}",
        channel="    dm_policy: open\n    group_policy: mention_only",
    )


async def test_pause_reply_resume_and_the_model_sees_it_all(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config(tmp_path, fake_tg, fake_llm)
    chat = f"telegram:{CUSTOMER}"
    async with running(path) as gw:
        code, out = await cli(capsys, path, "pause", chat, "--for", "0")
        assert code == 0 and f"{chat}: paused until resumed (by cli)" in out, out

        fake_tg.dm(CUSTOMER, "my order 1234 never arrived")
        [entry] = await settled(gw, str(CUSTOMER), 1)
        assert (entry.stage, entry.reason) == ("observe", "paused")  # journaled, reason-coded
        assert fake_tg.calls_of("sendMessage") == [] and fake_llm.requests == []
        assert fake_tg.calls_of("sendChatAction") == []  # no typing while paused

        code, out = await cli(capsys, path, "reply", chat, "Hi, Ann here: I'll check it.")
        assert code == 0 and f"sent to {chat} as the bot" in out, out
        [sent] = fake_tg.calls_of("sendMessage")
        assert sent.params["text"] == "Hi, Ann here: I'll check it."

        code, out = await cli(capsys, path, "list")
        assert "paused until resumed (by cli)" in out
        assert "user: my order 1234 never arrived" in out
        assert "human (cli): Hi, Ann here: I'll check it." in out

        why = await api(gw, f"/api/why?channel=telegram&user={CUSTOMER}")
        [trail] = why["trails"]
        assert trail["summary"] == (
            "kept as context, not answered (paused: a human took over the chat)"
            "; a human replied as the bot (cli)"
        )
        assert trail["human_replies"][0]["text"] == "Hi, Ann here: I'll check it."
        metrics = gw.metrics_text().decode()
        assert 'chatgate_takeover_total{channel="telegram",reason="paused"} 1.0' in metrics
        assert 'chatgate_takeover_total{channel="telegram",reason="human_reply"} 1.0' in metrics

        code, out = await cli(capsys, path, "resume", chat)
        assert code == 0 and f"{chat}: resumed" in out, out
        assert (await api(gw, "/api/chats"))["paused"] == []
        code, out = await cli(capsys, path, "resume", chat)
        assert code == 0 and f"{chat}: was not paused" in out, out

        fake_tg.dm(CUSTOMER, "thanks! any news?")
        await fake_tg.wait_for("sendMessage", 2, timeout=ANSWER_S)
        [request] = fake_llm.requests
        key = f"default:telegram:{CUSTOMER}"
        lines = await gw.rt.state.sessions.transcript(key)
        await settled(gw, str(CUSTOMER), 2)
        why = await api(gw, f"/api/why?channel=telegram&user={CUSTOMER}")
    # the human reply stays on the trail of the message it answered
    assert ["human_replies" in t for t in why["trails"]] == [False, True]
    said = [(m["role"], m["content"]) for m in request.messages if m["role"] != "system"]
    assert said == [
        ("user", "my order 1234 never arrived"),
        ("assistant", "Hi, Ann here: I'll check it."),
        ("user", "thanks! any news?"),
    ]
    assert fake_tg.calls_of("sendMessage")[-1].params["text"] == "echo: thanks! any news?"
    assert lines is not None
    assert [(x.role, x.human) for x in lines] == [
        ("user", None),
        ("assistant", "cli"),
        ("user", None),
        ("assistant", None),
    ]


async def test_bot_off_and_on_by_an_operator_but_not_by_anyone_else(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    path = config(tmp_path, fake_tg, fake_llm)
    async with running(path) as gw:
        fake_tg.command(GROUP, OPERATOR, "/bot off", chat_type="supergroup")
        [told] = await fake_tg.wait_for("sendMessage", timeout=ANSWER_S)
        assert told.params["text"] == EN[TextId.TAKEOVER_PAUSED_FOR].format(
            wait="60 minutes", on="/bot on"
        )
        fake_tg.group_message(GROUP, CUSTOMER, "hello?", mention=True)
        fake_tg.command(GROUP, CUSTOMER, "/bot on", chat_type="supergroup")  # not an operator
        entries = await settled(gw, str(CUSTOMER), 2)
        assert [(e.stage, e.reason) for e in entries] == [("observe", "paused")] * 2
        assert fake_llm.requests == [] and len(fake_tg.calls_of("sendMessage")) == 1

        fake_tg.command(GROUP, OPERATOR, "/bot on", chat_type="supergroup")
        await fake_tg.wait_for("sendMessage", 2, timeout=ANSWER_S)
        assert fake_tg.calls_of("sendMessage")[1].params["text"] == EN[TextId.TAKEOVER_RESUMED]
        switched = await settled(gw, str(OPERATOR), 2)
        assert {(e.stage, e.reason) for e in switched} == {
            ("command", "pause"),
            ("command", "resume"),
        }

        # Anyone else's /bot off is an ordinary message: answered, and the chat stays on.
        fake_tg.command(GROUP, CUSTOMER, "/bot off", chat_type="supergroup")
        await fake_tg.wait_for("sendMessage", 3, timeout=ANSWER_S)
        assert fake_tg.calls_of("sendMessage")[2].params["text"] == "echo: /bot off"
        assert (await api(gw, "/api/chats"))["paused"] == []
        said = [m["content"] for m in fake_llm.requests[0].messages if m["role"] == "user"]
    assert said == ["hello?", "/bot on", "/bot off"]  # the paused ones kept as context


async def test_a_pause_resumes_by_itself_after_auto_resume_s(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    clock = ManualClock()
    path = config(tmp_path, fake_tg, fake_llm, gateway="  takeover: {auto_resume_s: 600}\n")
    chat = f"telegram:{CUSTOMER}"
    async with running(path, clock=clock) as gw:
        paused = await api(gw, "/api/chats/pause", {"chat": chat})
        assert paused["pause"]["until"] == pytest.approx(clock.time() + 600)
        fake_tg.dm(CUSTOMER, "first")
        await settled(gw, str(CUSTOMER), 1)
        clock.advance(599)
        fake_tg.dm(CUSTOMER, "second")
        entries = await settled(gw, str(CUSTOMER), 2)
        assert [e.reason for e in entries] == ["paused", "paused"]
        assert fake_tg.calls_of("sendMessage") == []

        clock.advance(1)  # the pause ran out
        fake_tg.dm(CUSTOMER, "third")
        [answer] = await fake_tg.wait_for("sendMessage", timeout=ANSWER_S)
        assert answer.params["text"] == "echo: third"
        assert (await api(gw, "/api/chats"))["paused"] == []
        metrics = gw.metrics_text().decode()
    assert 'chatgate_takeover_total{channel="telegram",reason="auto_resume"} 1.0' in metrics
    said = [m["content"] for m in fake_llm.requests[0].messages if m["role"] == "user"]
    assert said == ["first", "second", "third"]


async def test_bad_requests_are_refused_with_a_reason(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    path = config(tmp_path, fake_tg, fake_llm)
    async with running(path) as gw:
        unknown = await api(gw, "/api/chats/pause", {"chat": "slack:C1"})
        assert unknown["http_status"] == 400 and "not configured" in unknown["error"]
        negative = await api(gw, "/api/chats/pause", {"chat": "telegram:1", "for_s": -5})
        assert negative["http_status"] == 400 and "for_s" in negative["error"]
        empty = await api(gw, "/api/chats/reply", {"chat": "telegram:1", "text": " "})
        assert empty["http_status"] == 400
        async with http() as client:
            async with client.post(url(gw, "/api/chats/pause"), json={"chat": "telegram:1"}) as r:
                assert r.status == 401  # a change needs the token, also on loopback
            async with client.post(
                url(gw, "/api/chats/pause"), data=b"{", headers=operator(gw)
            ) as r:
                assert r.status == 400 and json.loads(await r.text())
        assert (await api(gw, "/api/chats"))["paused"] == []
