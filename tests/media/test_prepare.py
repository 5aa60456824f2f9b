"""The media step on its own: a channel that serves files from memory (the adapter's `fetch`
contract), real Pillow/pypdf/filetype work, the outcome and notice for each case."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from PIL import Image

from chatgate.channels.telegram import FILES as TELEGRAM_FILES
from chatgate.config.media_models import AgentMediaConfig
from chatgate.media.describe import Describer
from chatgate.media.files import sweep
from chatgate.media.prepare import MediaContext, PreparedInput, prepare_attachments
from chatgate.model.chat import ChatMessage
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment, InboundMessage
from chatgate.model.reasons import MediaReason
from chatgate.texts.voice import Voice
from tests.fakes.llm import FakeLLM
from tests.media.samples import pdf, png


class MemoryFiles:
    """A channel's `fetch` over a dict of handle → bytes; `failures` fail the next downloads."""

    def __init__(self, files: dict[str, bytes], failures: int = 0) -> None:
        self.files, self.failures, self.fetched = files, failures, 0

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        self.fetched += 1
        if self.failures > 0:
            self.failures -= 1
            raise FetchError(MediaReason.DOWNLOAD_FAILED, "HTTP 502")
        data = self.files[str(attachment.handle)]
        if len(data) > max_bytes:
            raise FetchError(MediaReason.TOO_LARGE, "stream over the cap")
        dest.write_bytes(data)
        return len(data)


TELEGRAM_CAP = TELEGRAM_FILES.max_download_bytes


def _msg(*attachments: Attachment, text: str = "") -> InboundMessage:
    return InboundMessage(
        "tg", "telegram", "1", "direct", "1", "m1", text or f"[{attachments[0].kind}]",
        attachments=attachments,
    )  # fmt: skip


def _said(prepared: PreparedInput, voice: Voice | None = None) -> tuple[str, ...]:
    """The notices as the chat reads them (English unless ``voice`` says otherwise)."""
    return tuple((voice or Voice()).media(n) for n in prepared.notices)


def _ctx(tmp_path: Path, **media: object) -> MediaContext:
    return MediaContext(AgentMediaConfig(**media), TELEGRAM_CAP, tmp_path, True, None)  # type: ignore[arg-type]


async def _run(
    tmp_path: Path, files: MemoryFiles, *atts: Attachment, text: str = "", **media: object
) -> tuple[PreparedInput, str]:
    msg = _msg(*atts, text=text)
    prepared = await prepare_attachments([msg], files, _ctx(tmp_path, **media))
    [line] = prepared.apply([ChatMessage("user", msg.text, None, msg.key)])
    tmp = tmp_path / "media-tmp"
    assert not tmp.exists() or not list(tmp.iterdir())  # temporary files are gone
    return prepared, line.content


def _reasons(prepared: PreparedInput) -> list[MediaReason]:
    return [o.reason for o in prepared.outcomes]


async def test_a_large_image_is_downscaled_and_a_small_one_passed_through(tmp_path: Path) -> None:
    big = io.BytesIO()
    Image.new("RGB", (3000, 1500), (10, 20, 30)).save(big, "PNG")
    files = MemoryFiles({"big": big.getvalue(), "small": png()})
    prepared, text = await _run(
        tmp_path,
        files,
        Attachment("image", handle="big", name="big.png"),
        Attachment("image", handle="small"),
        max_image_side=1000,
    )
    assert _reasons(prepared) == [MediaReason.IMAGE_SENT] * 2
    assert text == "[image: big.png, 1000x500]\n\n[image: photo, 32x24]"
    resized, small = prepared.parts["tg:m1"]
    assert resized["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert small["image_url"]["url"].startswith("data:image/png;base64,")


async def test_a_corrupt_image_and_a_decompression_bomb_are_refused(tmp_path: Path) -> None:
    bomb = io.BytesIO()
    Image.new("1", (8000, 7000)).save(bomb, "PNG")  # 56 M pixels: over the guard
    corrupt = png()[:40] + b"\x00" * 60
    files = MemoryFiles({"bomb": bomb.getvalue(), "corrupt": corrupt})
    prepared, text = await _run(
        tmp_path,
        files,
        Attachment("image", handle="bomb", name="bomb.png"),
        Attachment("image", handle="corrupt", name="bad.png"),
    )
    assert _reasons(prepared) == [MediaReason.CORRUPT, MediaReason.CORRUPT]
    assert not prepared.parts
    assert "bomb.png could not be opened" in _said(prepared)[0]
    assert "[file not available (media_corrupt): bad.png, image/png" in text


async def test_the_bytes_decide_the_type_not_the_claimed_mime(tmp_path: Path) -> None:
    files = MemoryFiles({"a": b"col1,col2\n1,2\n", "b": pdf("Quarterly numbers")})
    prepared, text = await _run(
        tmp_path,
        files,
        Attachment("image", handle="a", name="a.jpg", mime="image/jpeg"),
        Attachment("image", handle="b", name="b.png", mime="image/png"),
        text="read these",
    )
    assert _reasons(prepared) == [MediaReason.DOCUMENT_TEXT] * 2
    assert [o.mime for o in prepared.outcomes] == ["text/plain", "application/pdf"]
    assert text == (
        "read these\n\n[document: a.jpg]\ncol1,col2\n1,2\n\n[document: b.png]\nQuarterly numbers"
    )


async def test_a_pdf_without_text_and_a_long_document_are_explained(tmp_path: Path) -> None:
    files = MemoryFiles({"scan": pdf(None), "long": b"x" * 500})
    prepared, text = await _run(
        tmp_path,
        files,
        Attachment("document", handle="scan", name="scan.pdf"),
        Attachment("document", handle="long", name="long.txt"),
        max_document_chars=100,
    )
    assert _reasons(prepared) == [MediaReason.NO_TEXT, MediaReason.DOCUMENT_TEXT]
    assert _said(prepared) == (
        "scan.pdf has no text layer (a scan?); only its name was passed on.",
    )
    assert text.endswith("x" * 100 + "\n[… cut at 100 characters]")
    assert prepared.outcomes[1].detail == "truncated"


async def test_a_failed_download_is_retried_once_then_explained(tmp_path: Path) -> None:
    once = MemoryFiles({"f": b"hello"}, failures=1)
    prepared, _ = await _run(tmp_path, once, Attachment("document", handle="f", name="f.txt"))
    assert (_reasons(prepared), once.fetched) == ([MediaReason.DOCUMENT_TEXT], 2)
    down = MemoryFiles({"f": b"hello"}, failures=5)
    prepared, _ = await _run(tmp_path, down, Attachment("document", handle="f", name="f.txt"))
    assert (_reasons(prepared), down.fetched) == ([MediaReason.DOWNLOAD_FAILED], 2)
    assert _said(prepared) == ("f.txt could not be downloaded; please send it again.",)
    assert prepared.outcomes[0].detail == "HTTP 502"


async def test_limits_refuse_before_downloading_and_while_streaming(tmp_path: Path) -> None:
    files = MemoryFiles({"a": b"a" * 10, "b": b"b" * 2000})
    prepared, _ = await _run(
        tmp_path,
        files,
        Attachment("document", handle="a", name="claims-big.txt", size=5000),
        Attachment("document", handle="b", name="lies-small.txt", size=10),
        Attachment("document", handle="a", name="third.txt"),
        max_bytes=1024,
        max_files_per_turn=2,
    )
    assert _reasons(prepared) == [
        MediaReason.TOO_LARGE,
        MediaReason.TOO_LARGE,
        MediaReason.TOO_MANY,
    ]
    assert files.fetched == 1  # only the file whose claimed size fit was downloaded
    assert len(prepared.notices) == 3


async def test_an_animated_sticker_is_noted_quietly_and_a_video_explained(tmp_path: Path) -> None:
    tgs = b"\x1f\x8b\x08\x00" + b"\x00" * 60  # gzip: Telegram's animated sticker format
    mp4 = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 60
    files = MemoryFiles({"s": tgs, "v": mp4})
    prepared, text = await _run(
        tmp_path, files, Attachment("sticker", handle="s"), Attachment("video", handle="v")
    )
    assert _reasons(prepared) == [MediaReason.FILE_NOTED, MediaReason.UNSUPPORTED_TYPE]
    assert _said(prepared) == ("video: this file type can't be read; only its name was passed on.",)
    assert "[file received: sticker, application/gzip" in text


async def test_media_turned_off_fetches_nothing_and_says_so(tmp_path: Path) -> None:
    files = MemoryFiles({"a": png()})
    prepared, text = await _run(
        tmp_path, files, Attachment("image", handle="a"), text="look", enabled=False
    )
    assert files.fetched == 0 and _reasons(prepared) == [MediaReason.DISABLED]
    assert text == "look\n\n[file not available (media_disabled): photo, unknown type]"
    assert _said(prepared) == ("photo: this assistant does not read files.",)


async def test_a_vision_model_describes_images_for_a_model_that_cannot_see(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("A red square with the word STOP.")
    describer = Describer("openai/fake-vision", fake_llm.base_url, "sk-describe", 10.0)
    ctx = replace(_ctx(tmp_path), vision=False, describer=describer)
    msg = _msg(Attachment("image", handle="a", name="sign.png"), text="what is this")
    prepared = await prepare_attachments([msg], MemoryFiles({"a": png()}), ctx)
    [line] = prepared.apply([ChatMessage("user", msg.text, None, msg.key)])
    assert (
        line.content
        == "what is this\n\n[image: sign.png, described] A red square with the word STOP."
    )
    assert _reasons(prepared) == [MediaReason.IMAGE_DESCRIBED] and not prepared.parts
    [request] = fake_llm.requests
    assert request.model == "fake-vision"
    assert request.messages[0]["content"][1]["image_url"]["url"].startswith("data:image/png")


async def test_a_fault_while_reading_one_file_costs_that_file_not_the_turn(
    tmp_path: Path,
) -> None:
    class Broken(MemoryFiles):
        async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
            if attachment.handle == "bad":
                raise KeyError("an adapter bug")
            return await super().fetch(attachment, dest, max_bytes)

    files = Broken({"ok": b"fine"})
    prepared, text = await _run(
        tmp_path,
        files,
        Attachment("document", handle="bad", name="bad.txt"),
        Attachment("document", handle="ok", name="ok.txt"),
    )
    assert _reasons(prepared) == [MediaReason.DOWNLOAD_FAILED, MediaReason.DOCUMENT_TEXT]
    assert prepared.outcomes[0].detail == "KeyError"
    assert text.endswith("[document: ok.txt]\nfine")


def test_a_crash_leftover_is_swept_at_start(tmp_path: Path) -> None:
    left = tmp_path / "media-tmp" / "abc"
    left.mkdir(parents=True)
    (left / "1.png").write_bytes(b"x")
    assert sweep(tmp_path) == 1 and not list((tmp_path / "media-tmp").iterdir())
    assert sweep(tmp_path / "nothing-here") == 0
