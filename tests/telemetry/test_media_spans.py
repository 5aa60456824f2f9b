"""The media step in the message's trace (in-memory exporter, the fake model server): a span per
download, transcription and vision description, by kind and size, never a file name or words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from chatgate import tracing
from chatgate.config.media_models import AgentMediaConfig
from chatgate.media.describe import Describer
from chatgate.media.prepare import MediaContext, prepare_attachments
from chatgate.media.transcribe import SpeechEndpoint
from chatgate.model.messages import Attachment, InboundMessage
from chatgate.model.reasons import MediaReason
from tests.fakes.llm import FakeLLM
from tests.media.samples import OGG_OPUS, png
from tests.media.test_prepare import TELEGRAM_CAP, MemoryFiles

ERROR = "StatusCode.ERROR"


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider.get_tracer("test"))
    yield exporter
    tracing.uninstall()


def _msg(*attachments: Attachment) -> InboundMessage:
    return InboundMessage(
        "tg", "telegram", "1", "direct", "1", "m1", "look", attachments=attachments
    )


def _named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


async def test_downloads_transcription_and_vision_are_spans_without_content(
    tmp_path: Path, fake_llm: FakeLLM, exported: InMemorySpanExporter
) -> None:
    fake_llm.audio.script("call the vet at noon")
    fake_llm.script("A red square with the word STOP.")
    ctx = MediaContext(
        AgentMediaConfig(),
        TELEGRAM_CAP,
        tmp_path,
        False,
        SpeechEndpoint("whisper-1", fake_llm.base_url, "sk-speech", 10.0),
        Describer("openai/fake-vision", fake_llm.base_url, "sk-describe", 10.0),
    )
    files = MemoryFiles({"a": png(), "v": OGG_OPUS})
    msg = _msg(
        Attachment("image", handle="a", name="secret-plan.png"),
        Attachment("voice", handle="v", name="note.ogg", mime="audio/ogg"),
        Attachment("document", handle="gone", name="lost.txt"),
    )
    with tracing.span("telegram message"):
        prepared = await prepare_attachments([msg], files, ctx)
    reasons = sorted(o.reason for o in prepared.outcomes)
    assert reasons == sorted(
        [MediaReason.IMAGE_DESCRIBED, MediaReason.TRANSCRIBED, MediaReason.DOWNLOAD_FAILED]
    )

    [root] = _named(exported, "telegram message")
    downloads = _named(exported, "chatgate.media.download")
    assert sorted(str(d.attributes["chatgate.media.kind"]) for d in downloads) == [
        "document",
        "image",
        "voice",
    ]
    assert all(d.parent is not None and d.parent.span_id == root.context.span_id for d in downloads)
    [failed] = [d for d in downloads if str(d.status.status_code) == ERROR]
    assert failed.attributes["error.type"] == MediaReason.DOWNLOAD_FAILED.value
    assert {d.attributes.get("chatgate.media.size") for d in downloads if d is not failed} == {
        len(png()),
        len(OGG_OPUS),
    }
    [heard] = _named(exported, "chatgate.media.transcribe")
    assert heard.attributes["gen_ai.request.model"] == "whisper-1"
    [seen] = _named(exported, "chat openai/fake-vision")
    assert seen.attributes["chatgate.media.step"] == "vision"
    assert seen.attributes["gen_ai.provider.name"] == "openai"

    everything = json.dumps([json.loads(s.to_json()) for s in exported.get_finished_spans()])
    for words in ("secret-plan", "note.ogg", "lost.txt", "vet", "STOP", "sk-"):
        assert words not in everything
