"""Replies with files on WhatsApp, end to end: upload to `/media`, then a media message naming
the returned id; degrades, the 24-hour window, upload failures and the DLQ replay."""

from __future__ import annotations

from pathlib import Path

from chatgate.model.messages import Target
from chatgate.model.outbound import File, OutboundMessage
from chatgate.model.reasons import DeliveryStatus
from tests.channels.telegram.helpers_b import settled
from tests.channels.whatsapp.agents import OGG, PNG
from tests.channels.whatsapp.support import USER, webhook_url, whatsapp_config
from tests.fakes.llm import FakeLLM
from tests.fakes.whatsapp import FakeWhatsApp, GraphFault
from tests.harness import channel_status, running
from tests.media.samples import OGG_OPUS

FILES = "    dm_policy: open\n"


def outgoing(tmp_path: Path) -> list[Path]:
    root = tmp_path / "state" / "outgoing"
    return [p for p in root.iterdir() if not p.name.startswith(".")] if root.is_dir() else []


async def ask(wa: FakeWhatsApp, gw: object, text: str, wamid: str) -> None:
    await wa.post(webhook_url(gw), wa.message(USER, text=text, wamid=wamid))  # type: ignore[arg-type]


async def test_text_then_a_captioned_photo_then_a_named_document(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm, agent="files")) as gw:
        await ask(fake_wa, gw, "chart please", "wamid.IN-chart")
        entry = await settled(gw, "whatsapp:wamid.IN-chart")
        sent = fake_wa.sent()
    assert entry.delivery == DeliveryStatus.SENT
    assert [m["type"] for m in sent] == ["text", "image", "document"]
    assert sent[0]["text"]["body"] == "Here is the chart."
    photo, doc = fake_wa.uploads[sent[1]["image"]["id"]], fake_wa.uploads[sent[2]["document"]["id"]]
    assert (photo.data, photo.filename, photo.mime) == (PNG, "chart.png", "image/png")
    assert sent[1]["image"]["caption"] == "Q3 revenue"
    assert doc.data == b"%PDF-1.4 fake" and sent[2]["document"]["filename"] == "report.pdf"
    assert channel_status(gw, "whatsapp")["counters"]["uploads"] == 2
    assert outgoing(tmp_path) == []


async def test_a_voice_note_is_ogg_audio_and_its_caption_follows_as_text(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm, agent="files")) as gw:
        await ask(fake_wa, gw, "voice", "wamid.IN-voice")
        await settled(gw, "whatsapp:wamid.IN-voice")
        audio, caption = fake_wa.sent()
    assert audio["type"] == "audio" and "caption" not in audio["audio"]
    upload = fake_wa.uploads[audio["audio"]["id"]]
    assert (upload.data, upload.mime) == (OGG, "audio/ogg")
    assert caption["text"]["body"] == "said aloud"


async def test_an_image_whatsapp_cannot_show_goes_as_a_document_with_a_note(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm, agent="files")) as gw:
        await ask(fake_wa, gw, "gif", "wamid.IN-gif")
        await settled(gw, "whatsapp:wamid.IN-gif")
        sent = fake_wa.sent()
    [doc] = [m["document"] for m in sent if m["type"] == "document"]
    [note] = [m["text"]["body"] for m in sent if m["type"] == "text"]
    assert doc["filename"] == "anim.gif" and "1 image sent as a file" in note


async def test_a_refused_upload_keeps_the_file_in_the_dlq_and_replay_uploads_it(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    fake_wa.fail("/media", GraphFault(131053, "Media upload error"))
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm, agent="files")) as gw:
        await ask(fake_wa, gw, "chart please", "wamid.IN-fail")
        entry = await settled(gw, "whatsapp:wamid.IN-fail")
        [dead] = await gw.rt.dead_letters.list()
        assert dead.message["first_chunk"] == 1  # the text went out; the photo did not
        assert len(outgoing(tmp_path)) == 2
        assert "5 MB" in channel_status(gw, "whatsapp")["last_error"]["hint"]
        replay = await gw.replay_dead_letter(dead.id)
        sent = fake_wa.sent()
    assert entry.delivery != DeliveryStatus.SENT and dead.kind == "invalid_request"
    assert replay["status"] == "sent"
    assert [m["type"] for m in sent] == ["text", "image", "document"]
    assert outgoing(tmp_path) == []


async def test_outside_the_window_a_file_waits_in_the_dlq_with_its_reason(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    message = OutboundMessage((File("a.pdf", "application/pdf", data=b"%PDF"),))
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        report = await gw.rt.delivery.deliver(Target("whatsapp", USER), message)
        [letter] = await gw.rt.dead_letters.list()
    assert report.kind == "outside_window" and letter.kind == "outside_window"
    assert fake_wa.uploads == {} and fake_wa.sent() == []


async def test_a_voice_note_is_answered_with_text_and_an_ogg_voice_note(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    talker = f"""  talker:
    backend: litellm
    model: openai/fake-model
    api_base: {fake_llm.base_url}
    api_key: sk-whatsapp-test
    voice_reply: when_user_sent_voice
    voice_model: openai/tts-1
"""
    config = whatsapp_config(tmp_path, fake_wa, fake_llm, agent="talker", agents=talker)
    voice = {"id": "MEDIA9", "mime_type": "audio/ogg; codecs=opus", "voice": True}
    fake_wa.media.add("MEDIA9", OGG_OPUS, "audio/ogg; codecs=opus")  # fetched and transcribed
    async with running(config) as gw:
        post = fake_wa.message(USER, "audio", wamid="wamid.IN-voice", audio=voice)
        await fake_wa.post(webhook_url(gw), post)
        entry = await settled(gw, "whatsapp:wamid.IN-voice", timeout=30)
        text, audio = fake_wa.sent()
    assert entry.delivery == DeliveryStatus.SENT
    [said] = fake_llm.speech_requests
    assert text["type"] == "text" and said["input"] == text["text"]["body"]
    upload = fake_wa.uploads[audio["audio"]["id"]]
    assert upload.mime == "audio/ogg" and upload.data.startswith(b"OggS")
