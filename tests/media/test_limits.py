"""The pure media decisions: what is fetched, how each type is understood, what users are told."""

from __future__ import annotations

import pytest

from chatgate.channels.telegram import FILES as TELEGRAM_FILES
from chatgate.media.prepare import decodes_at_once
from chatgate.model.reasons import MediaReason
from chatgate.policies.media import (
    MB,
    FetchPlan,
    MediaLimits,
    MediaNotice,
    Treatment,
    model_note,
    plan_fetches,
    treatment,
    user_notice,
)
from chatgate.texts.voice import Voice


def _said(notice: object, language: str = "en") -> str | None:
    """A notice as a chat in ``language`` reads it (None: no notice)."""
    assert notice is None or isinstance(notice, MediaNotice)
    return None if notice is None else Voice(language=language).media(notice)


TELEGRAM_CAP = TELEGRAM_FILES.max_download_bytes  # the Bot API's 20 MB, from the descriptor
SLACK_CAP = None  # Slack's files API caps nothing below the config
LIMITS = MediaLimits(max_bytes=10 * MB, max_files=3, max_total_bytes=15 * MB)

PLANS = [
    ("nothing", [], []),
    ("unknown size fetched with the cap", [None], [FetchPlan(None, 10 * MB)]),
    ("over the file cap refused", [11 * MB], [FetchPlan(MediaReason.TOO_LARGE, 0)]),
    (
        "the turn total caps later files",
        [9 * MB, 9 * MB, 1 * MB],
        [
            FetchPlan(None, 10 * MB),
            FetchPlan(MediaReason.TURN_TOTAL, 0),
            FetchPlan(None, 6 * MB),
        ],
    ),
    (
        "more than max_files",
        [1, 1, 1, 1],
        [FetchPlan(None, 10 * MB)] * 3 + [FetchPlan(MediaReason.TOO_MANY, 0)],
    ),
]


@pytest.mark.parametrize(("name", "sizes", "plans"), PLANS, ids=[p[0] for p in PLANS])
def test_plan_fetches(name: str, sizes: list[int | None], plans: list[FetchPlan]) -> None:
    got = plan_fetches(sizes, LIMITS)
    assert [p.refused for p in got] == [p.refused for p in plans]
    assert all(g.max_bytes >= p.max_bytes for g, p in zip(got, plans, strict=True))


def test_a_voice_note_longer_than_max_audio_s_is_refused_before_download() -> None:
    limits = MediaLimits(max_audio_s=60)
    plans = plan_fetches([1000, 1000, 1000], limits, [59.0, 61.0, None])
    assert [p.refused for p in plans] == [None, MediaReason.TOO_LONG, None]
    text = _said(user_notice(MediaReason.TOO_LONG, "", TELEGRAM_CAP, limits, "voice"))
    assert text == "voice message is longer than 60 seconds, the most this bot transcribes."


def test_telegram_caps_files_at_20_mb_whatever_the_config_says() -> None:
    assert MediaLimits(max_bytes=50 * MB).capped(TELEGRAM_CAP).max_bytes == 20 * MB
    assert MediaLimits(max_bytes=5 * MB).capped(TELEGRAM_CAP).max_bytes == 5 * MB
    assert MediaLimits(max_bytes=50 * MB).capped(SLACK_CAP).max_bytes == 50 * MB


TYPES = [
    ("image/png", Treatment.IMAGE),
    ("image/webp", Treatment.IMAGE),
    ("image/tiff", Treatment.NOTE),
    ("audio/ogg", Treatment.SPEECH),
    ("audio/mpeg", Treatment.SPEECH),
    ("application/pdf", Treatment.PDF),
    ("text/csv", Treatment.TEXT),
    ("application/json", Treatment.TEXT),
    ("video/mp4", Treatment.NOTE),
    ("application/zip", Treatment.NOTE),
    ("application/octet-stream", Treatment.NOTE),
]


@pytest.mark.parametrize(("mime", "how"), TYPES)
def test_treatment_by_sniffed_type(mime: str, how: Treatment) -> None:
    assert treatment(mime) is how


def test_every_refusal_has_a_visible_notice_and_successes_have_none() -> None:
    silent = {
        MediaReason.IMAGE_SENT,
        MediaReason.IMAGE_DESCRIBED,
        MediaReason.TRANSCRIBED,
        MediaReason.DOCUMENT_TEXT,
        MediaReason.FILE_NOTED,
    }
    for reason in MediaReason:
        text = _said(user_notice(reason, "a.pdf", SLACK_CAP, LIMITS))
        assert (text is None) == (reason in silent), reason
        if text is not None:
            assert "a.pdf" in text


def test_telegram_notice_names_the_bot_api_limit() -> None:
    limits = MediaLimits().capped(TELEGRAM_CAP)
    text = _said(user_notice(MediaReason.TOO_LARGE, "big.mov", TELEGRAM_CAP, limits))
    assert text == (
        "big.mov is larger than 20 MB, the most this bot accepts (Telegram lets bots "
        "download files of up to 20 MB); send a smaller file."
    )
    assert "Telegram" not in str(_said(user_notice(MediaReason.TOO_LARGE, "x", SLACK_CAP, LIMITS)))


def test_model_notes_carry_the_reason_code_and_facts() -> None:
    assert model_note(MediaReason.TOO_LARGE, "v.mp4", "video/mp4", 21 * MB) == (
        "[file not available (media_too_large): v.mp4, video/mp4, 21.0 MB]"
    )
    assert model_note(MediaReason.UNSUPPORTED_TYPE, "a.zip", "application/zip", 2048) == (
        "[file received: a.zip, application/zip, 2 KB; its content is not readable here]"
    )


@pytest.mark.parametrize(("cores", "decodes"), [(1, 1), (2, 1), (3, 2), (16, 2)])
def test_images_decode_one_per_core_the_event_loop_leaves_at_most_two(
    cores: int, decodes: int
) -> None:
    assert decodes_at_once(cores) == decodes
