"""Replies with files, end to end through the real PTB: native uploads, degrades, the DLQ."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.model.reasons import DeliveryStatus
from tests.channels.discord.support import python_agent
from tests.channels.telegram.helpers_b import key_of, settled
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram, FaultSpec
from tests.harness import over_http, running

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\0" * 64
OGG = b"OggS" + b"\0" * 60
AGENT = """
import base64
from chatgate.model.outbound import File, OutboundMessage, Text

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\\0" * 64
OGG = b"OggS" + b"\\0" * 60


def agent(turn):
    if turn.text == "big":
        return OutboundMessage((File("scan.png", "image/png", "image", data=b"x" * (11 << 20)),))
    if turn.text == "voice":
        return {"blocks": [{"type": "file", "name": "hello.ogg", "mime": "audio/ogg",
                            "kind": "voice", "data_base64": base64.b64encode(OGG).decode()}]}
    return OutboundMessage((
        Text("Here is the chart."),
        File("chart.png", kind="image", caption="Q3 revenue", data=PNG),
        File("notes.txt", "text/plain", data=b"notes"),
    ))
"""
CHANNEL = "    dm_policy: open\n    agent: scripted\n"
USER = 42


def outgoing(tmp_path: Path) -> list[Path]:
    root = tmp_path / "state" / "outgoing"
    return [p for p in root.iterdir() if not p.name.startswith(".")] if root.is_dir() else []


def config(tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> Path:
    agents = python_agent(tmp_path, monkeypatch, "tg_files_agent", AGENT)
    return telegram_config(tmp_path, tg, llm, channel=CHANNEL, agent=agents)


async def test_text_then_a_photo_with_caption_then_a_document(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running(config(tmp_path, fake_tg, fake_llm, monkeypatch)) as gw:
        update = fake_tg.dm(USER, "chart please")
        entry = await settled(gw, key_of(update), timeout=20)
        stored = entry.reply["message"]["blocks"] if entry.reply else []
    assert entry.delivery == DeliveryStatus.SENT
    assert [m["text"] for m in fake_tg.sent] == ["Here is the chart."]
    [photo] = fake_tg.calls_of("sendPhoto")
    assert photo.params["photo"]["data"] == PNG and photo.params["photo"]["filename"] == "chart.png"
    assert photo.params["caption"] == "Q3 revenue" and photo.params["chat_id"] == USER
    [doc] = fake_tg.calls_of("sendDocument")
    assert doc.params["document"]["data"] == b"notes"
    # The journal keeps references, never bytes; the files are gone once sent.
    files = [b for b in stored if b["type"] == "file"]
    assert [len(f["ref"]) for f in files] == [32, 32] and all("data_base64" not in f for f in files)
    assert outgoing(tmp_path) == []


async def test_a_voice_note_is_a_native_voice_message(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running(config(tmp_path, fake_tg, fake_llm, monkeypatch)) as gw:
        await settled(gw, key_of(fake_tg.dm(USER, "voice")), timeout=20)
    [voice] = fake_tg.calls_of("sendVoice")
    assert voice.params["voice"]["data"] == OGG


async def test_a_photo_over_10_mb_goes_as_a_document_with_a_note(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running(config(tmp_path, fake_tg, fake_llm, monkeypatch)) as gw:
        entry = await settled(gw, key_of(fake_tg.dm(USER, "big")), timeout=30)
    assert not fake_tg.calls_of("sendPhoto")
    [doc] = fake_tg.calls_of("sendDocument")
    assert len(doc.params["document"]["data"]) == 11 << 20
    assert "1 image sent as a file" in fake_tg.sent[-1]["text"]
    assert entry.delivery == DeliveryStatus.SENT


async def test_a_failed_upload_keeps_its_file_in_the_dlq_and_replay_uploads_it(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_tg.fail("sendPhoto", FaultSpec(403, "Forbidden: bot was blocked by the user"))
    async with running(config(tmp_path, fake_tg, fake_llm, monkeypatch)) as gw:
        entry = await settled(gw, key_of(fake_tg.dm(USER, "chart please")), timeout=20)
        assert entry.delivery == DeliveryStatus.DEAD_TARGET
        [dead] = await gw.rt.dead_letters.list()
        assert dead.message["first_chunk"] == 1  # the text went out; the photo did not
        assert len(outgoing(tmp_path)) == 2  # kept for the replay
        replay = await gw.replay_dead_letter(dead.id)
        assert replay["status"] == "sent"
    assert [c.params["photo"]["data"] for c in fake_tg.calls_of("sendPhoto")] == [PNG, PNG]
    assert len(fake_tg.calls_of("sendDocument")) == 1 and len(fake_tg.sent) == 1
    assert outgoing(tmp_path) == []


async def test_kill9_after_the_answer_was_recorded_uploads_its_file_once_after_restart(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.daemon import Daemon

    cfg = config(tmp_path, fake_tg, over_http(fake_llm), monkeypatch)
    env = {"PYTHONPATH": str(tmp_path / "agents")}
    fake_tg.fail("sendMessage", FaultSpec(200, "stalled", delay_s=30))  # the text before the photo
    first = await Daemon(cfg, env=env).start()
    fake_tg.dm(USER, "chart please")
    await fake_tg.wait_for("sendMessage", timeout=20)  # answered, recorded, now sending
    assert len(outgoing(tmp_path)) == 2
    first.kill9()
    await first.wait()
    second = await Daemon(cfg, env=env, log_name="daemon2.log").start()
    try:
        await fake_tg.wait_for("sendDocument", timeout=30)
    finally:
        assert await second.terminate() == 0
    [photo] = fake_tg.calls_of("sendPhoto")
    assert photo.params["photo"]["data"] == PNG
    assert outgoing(tmp_path) == []


async def test_an_upload_that_timed_out_is_not_sent_again(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_tg.fail("sendPhoto", FaultSpec(200, "slow upload", delay_s=8))  # past the 5 s timeout
    async with running(config(tmp_path, fake_tg, fake_llm, monkeypatch)) as gw:
        entry = await settled(gw, key_of(fake_tg.dm(USER, "chart please")), timeout=30)
        [dead] = await gw.rt.dead_letters.list()
    assert entry.delivery == DeliveryStatus.UNDELIVERED
    assert len(fake_tg.calls_of("sendPhoto")) == 1  # it may have arrived: never a second copy
    assert "may have arrived" in dead.error and dead.message["first_chunk"] == 1


async def test_a_dead_letter_counts_only_the_failed_sends_and_a_file_gone_since_is_a_notice(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = python_agent(tmp_path, monkeypatch, "tg_files_agent", AGENT)
    path = telegram_config(
        tmp_path,
        fake_tg,
        fake_llm,
        channel=CHANNEL + "    language: de\n",
        agent=agents,
        gateway="  delivery: {max_attempts: 3, base_delay_s: 0, max_delay_s: 0.01}",
    )
    fake_tg.fail("sendPhoto", FaultSpec(500, "Internal Server Error"), times=3)
    async with running(path) as gw:
        entry = await settled(gw, key_of(fake_tg.dm(USER, "chart please")), timeout=20)
        assert entry.delivery == DeliveryStatus.UNDELIVERED
        [dead] = await gw.rt.dead_letters.list()
        assert dead.attempts == 3  # the photo's three tries; the text before it went out once
        for stored in outgoing(tmp_path):  # swept or lost before the operator replays it
            stored.unlink()
        replay = await gw.replay_dead_letter(dead.id)
        assert replay["status"] == "sent"
    assert len(fake_tg.calls_of("sendPhoto")) == 3
    assert [m["text"] for m in fake_tg.sent][-2:] == [
        "📎 chart.png ist nicht mehr verfügbar.",
        "📎 notes.txt ist nicht mehr verfügbar.",
    ]
