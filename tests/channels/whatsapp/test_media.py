"""WhatsApp media end to end: the Graph media endpoint (`/{media-id}` → url → bytes with the
bearer token), transcription of voice notes, and the no-vision notice for images."""

from __future__ import annotations

from pathlib import Path

from tests.channels.whatsapp.support import USER, webhook_url, whatsapp_config
from tests.fakes.llm import FakeLLM
from tests.fakes.whatsapp import FakeWhatsApp
from tests.harness import running
from tests.media.samples import OGG_OPUS, pdf, png


async def test_voice_note_and_document_are_fetched_by_media_id_and_understood(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    fake_wa.media.add("MEDIA-V", OGG_OPUS, "audio/ogg; codecs=opus")
    fake_wa.media.add("MEDIA-D", pdf("Meeting moved to Friday"), "application/pdf")
    fake_llm.audio.script("book a table for two")
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        voice = {"id": "MEDIA-V", "mime_type": "audio/ogg; codecs=opus", "voice": True}
        post = fake_wa.message(USER, "audio", audio=voice, wamid="wamid.V1")
        assert (await fake_wa.post(webhook_url(gw), post))[0] == 200
        await fake_wa.wait_sent(1)
        doc = {"id": "MEDIA-D", "mime_type": "application/pdf", "filename": "memo.pdf"}
        post = fake_wa.message(USER, "document", document=doc, wamid="wamid.D1")
        assert (await fake_wa.post(webhook_url(gw), post))[0] == 200
        await fake_wa.wait_sent(2)
    assert fake_wa.media.downloads == ["MEDIA-V", "MEDIA-D"]
    assert fake_llm.audio.requests[0].data == OGG_OPUS
    first, second = (r.last_user_text for r in fake_llm.requests)
    assert first == "[voice message transcript] book a table for two"
    assert second == "[document: memo.pdf]\nMeeting moved to Friday"


async def test_an_image_for_a_model_without_vision_is_explained_not_sent(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    fake_wa.media.add("MEDIA-I", png(), "image/png")
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm)) as gw:
        image = {"id": "MEDIA-I", "mime_type": "image/png", "caption": "look"}
        post = fake_wa.message(USER, "image", image=image, wamid="wamid.I1")
        assert (await fake_wa.post(webhook_url(gw), post))[0] == 200
        [sent] = await fake_wa.wait_sent(1)
    assert "photo: this assistant can't see images." in sent["text"]["body"]
    [request] = fake_llm.requests
    assert isinstance(request.messages[-1]["content"], str)  # no image part
    assert "media_no_vision" in str(request.last_user_text)
