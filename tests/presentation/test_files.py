"""Files in replies: the codec, the per-channel file rules and what `adapt` reports."""

from __future__ import annotations

import base64

import pytest

from chatgate.channels.discord import LIMITS as DISCORD
from chatgate.channels.slack import LIMITS as SLACK
from chatgate.channels.telegram import LIMITS as TELEGRAM
from chatgate.channels.whatsapp import LIMITS as WHATSAPP
from chatgate.model.outbound import File, OutboundMessage, Text, message_from_dict, message_to_dict
from chatgate.model.reasons import DegradeReason as R
from chatgate.presentation.degrade import adapt
from chatgate.presentation.file_rules import MB, FileLimits, fit_file, human_size
from chatgate.presentation.limits import PLAIN

TG = TELEGRAM.files
DC = DISCORD.files
WA = WHATSAPP.files


def stored(kind: str = "document", size: int = 1000, caption: str = "") -> File:
    return File("f.bin", "application/octet-stream", kind, caption, size, "a" * 32)  # type: ignore[arg-type]


def typed(mime: str, kind: str, size: int = 1000) -> File:
    return File("f", mime, kind, "", size, "a" * 32)  # type: ignore[arg-type]


# (file, limits, expected kind or None when not uploaded, reasons, text shown beside it)
CASES: list[tuple[File, FileLimits | None, str | None, tuple[R, ...], str]] = [
    (stored("image", 5 * MB), TG, "image", (), ""),
    (stored("image", 11 * MB), TG, "document", (R.IMAGE_AS_DOCUMENT,), ""),
    (stored("document", 51 * MB), TG, None, (R.FILE_TOO_LARGE,), "over this chat's 50 MB"),
    (stored("voice"), TG, "voice", (), ""),
    (stored("voice"), DC, "audio", (R.VOICE_AS_AUDIO,), ""),
    (stored("video", 11 * MB), DC, None, (R.FILE_TOO_LARGE,), "10 MB file limit"),
    (stored("audio"), None, None, (R.FILE_UNSUPPORTED,), "cannot receive files"),
    (stored("image", caption="x" * 1025), TG, "image", (R.CAPTION_AS_TEXT,), "x" * 1025),
    (stored("image", caption="x" * 1024), TG, "image", (), ""),
    (
        stored("voice"),
        FileLimits(10 * MB, 10, kinds=frozenset({"document"})),
        "document",
        (R.FILE_AS_DOCUMENT,),
        "",
    ),
    (typed("image/jpeg", "image", 5 * MB), WA, "image", (), ""),
    (typed("image/png", "image", 5 * MB + 1), WA, "document", (R.IMAGE_AS_DOCUMENT,), ""),
    (typed("image/gif", "image"), WA, "document", (R.IMAGE_AS_DOCUMENT,), ""),
    (typed("audio/ogg", "voice", 16 * MB), WA, "voice", (), ""),
    (typed("audio/ogg", "voice", 16 * MB + 1), WA, "document", (R.FILE_AS_DOCUMENT,), ""),
    (typed("video/mp4", "video", 17 * MB), WA, "document", (R.FILE_AS_DOCUMENT,), ""),
    (typed("application/pdf", "document", 100 * MB), WA, "document", (), ""),
    (typed("application/pdf", "document", 101 * MB), WA, None, (R.FILE_TOO_LARGE,), "100 MB"),
]


@pytest.mark.parametrize(("file", "limits", "kind", "reasons", "text"), CASES)
def test_fit_file(
    file: File, limits: FileLimits | None, kind: str | None, reasons: tuple[R, ...], text: str
) -> None:
    fit = fit_file(file, limits)
    assert (fit.file.kind if fit.file else None) == kind
    assert fit.reasons == reasons
    assert text in fit.text and bool(text) == bool(fit.text)
    if fit.file is not None and R.CAPTION_AS_TEXT in reasons:
        assert fit.file.caption == ""


def test_a_file_that_fits_is_kept_as_the_same_object() -> None:
    file = stored("image")
    assert fit_file(file, TG).file is file


@pytest.mark.parametrize(
    ("size", "shown"), [(0, "0 bytes"), (999, "999 bytes"), (1536, "1.5 KB"), (50 * MB, "50 MB")]
)
def test_human_size(size: int, shown: str) -> None:
    assert human_size(size) == shown


def test_adapt_reports_file_degradations_and_keeps_the_text_notice_visible() -> None:
    message = OutboundMessage((Text("here"), stored("video", 11 * MB), stored("voice")))
    adapted, report = adapt(message, DISCORD)
    assert report is not None
    assert report.reasons == (R.FILE_TOO_LARGE, R.VOICE_AS_AUDIO)
    texts = [b.text for b in adapted.blocks if isinstance(b, Text)]
    assert any("10 MB file limit" in t for t in texts)
    files = [b for b in adapted.blocks if isinstance(b, File)]
    assert [f.kind for f in files] == ["audio"]


def test_a_channel_without_files_gets_a_notice_instead() -> None:
    adapted, report = adapt(OutboundMessage((stored("image"),)), PLAIN)
    assert report is not None and report.reasons == (R.FILE_UNSUPPORTED,)
    assert not any(isinstance(b, File) for b in adapted.blocks)


def test_every_platform_with_uploads_declares_them() -> None:
    assert TG is not None and DC is not None and SLACK.files is not None
    assert TG.max_bytes == 50 * MB and TG.max_photo_bytes == 10 * MB and DC.max_bytes == 10 * MB


def test_codec_round_trip_of_a_stored_file_keeps_only_the_reference() -> None:
    message = OutboundMessage((Text("chart"), stored("image", 42, "Q3")))
    data = message_to_dict(message)
    assert data["blocks"][1] == {
        "type": "file",
        "name": "f.bin",
        "mime": "application/octet-stream",
        "kind": "image",
        "caption": "Q3",
        "size": 42,
        "ref": "a" * 32,
    }
    assert message_from_dict(data) == message


def test_an_agent_file_decodes_from_base64() -> None:
    raw = {"type": "file", "name": "a.txt", "mime": "text/plain", "data_base64": "aGk="}
    [file] = message_from_dict({"blocks": [raw]}).blocks
    assert isinstance(file, File) and file.data == b"hi" and not file.stored
    again = message_to_dict(OutboundMessage((file,)))["blocks"][0]
    assert again["data_base64"] == base64.b64encode(b"hi").decode()


@pytest.mark.parametrize(
    ("block", "error"),
    [
        ({"type": "file", "name": "a"}, "exactly one of"),
        ({"type": "file", "name": "a", "url": "http://x", "path": "/tmp/a"}, "exactly one of"),
        ({"type": "file", "name": "a", "data_base64": "!!"}, "not valid base64"),
        ({"type": "file", "name": "a", "url": "http://x", "kind": "gif"}, "file kind"),
        ({"type": "file", "name": "a", "url": "http://x", "size": -1}, "'size'"),
    ],
)
def test_bad_file_blocks_name_the_problem(block: dict[str, object], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        message_from_dict({"blocks": [block]})


def test_plain_text_says_which_file_was_sent() -> None:
    message = OutboundMessage((stored("image", caption="Q3 revenue"),))
    assert message.plain_text == "[image: f.bin]\nQ3 revenue"
