"""File notices come from the catalog: worded in the user's language with its units and
durations, the kind's own word for a file without a name, and overridable like any text."""

from __future__ import annotations

import pytest

from chatgate.channels.telegram import FILES as TELEGRAM_FILES
from chatgate.config.text_models import TextOverrides
from chatgate.model.reasons import MediaReason
from chatgate.model.text_ids import TextId
from chatgate.policies.media import MB, MediaLimits, MediaNotice, user_notice
from chatgate.texts import Catalog
from chatgate.texts.voice import Voice

LIMITS = MediaLimits(max_bytes=20 * MB, max_files=3, max_total_bytes=50 * MB, max_audio_s=600)


@pytest.mark.parametrize(
    ("reason", "name", "kind", "language", "text"),
    [(MediaReason.TOO_LARGE, "scan.pdf", "document", "de",
      "scan.pdf ist größer als 20 MB, das Maximum für diesen Bot (Telegram lässt Bots nur "
      "Dateien bis 20 MB herunterladen); bitte schicke eine kleinere Datei."),
     (MediaReason.TURN_TOTAL, "", "image", "fr",
      "photo : non lu ; les fichiers d'un même message ne peuvent dépasser 50\u202fMo au total."),
     (MediaReason.TOO_LONG, "", "voice", "ru",
      "голосовое сообщение: запись длиннее 10 минут — больше этот бот не расшифровывает."),
     (MediaReason.TOO_MANY, "", "sticker", "es",
      "Omití sticker: leo como máximo 3 archivos por mensaje."),
     (MediaReason.NO_VISION, "", "image", "en", "photo: this assistant can't see images.")],
)  # fmt: skip
def test_notices_are_worded_in_the_users_language(
    reason: MediaReason, name: str, kind: str, language: str, text: str
) -> None:
    notice = user_notice(reason, name, TELEGRAM_FILES.max_download_bytes, LIMITS, kind)
    assert notice is not None
    assert Voice(language=language).media(notice) == text


@pytest.mark.parametrize("reason", list(MediaReason))
def test_every_notice_renders_in_every_language(reason: MediaReason) -> None:
    notice = user_notice(reason, "", None, LIMITS, "voice")
    for language in ("en", "de", "es", "fr", "ru"):
        text = "" if notice is None else Voice(language=language).media(notice)
        assert "{" not in text and (notice is None or text)


def test_a_notice_is_overridable_per_channel_and_validated() -> None:
    overrides = TextOverrides.model_validate(
        {"media.no_vision": {"de": "{name}: Bilder kann ich leider nicht ansehen."}}
    )
    catalog = Catalog(channel_overrides={"tg": overrides.as_overrides()})
    voice = Voice(catalog=catalog, language="de", channel="tg")
    notice = MediaNotice(TextId.MEDIA_NO_VISION, "", "image")
    assert voice.media(notice) == "Foto: Bilder kann ich leider nicht ansehen."
    with pytest.raises(ValueError, match="unknown placeholder"):
        TextOverrides.model_validate({"media.too_large": "{name} over {limit}"})


def test_the_transcript_echo_is_a_catalog_text() -> None:
    heard = MediaNotice(TextId.MEDIA_HEARD, text="water the plants")
    assert Voice(language="fr").media(heard) == "Entendu : water the plants"
