"""Counting texts pluralised by Babel's rules per language, the `/status` reply, the note on
what a channel could not show, and WhatsApp's menu words: all from the catalog, in every
shipped language, and none of them naming operator things."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel import Locale

from chatgate.channels.whatsapp.render import MenuWords, render
from chatgate.config.text_models import TextOverrides
from chatgate.model.outbound import (
    Button,
    Buttons,
    OutboundMessage,
    Select,
    SelectOption,
    Table,
    Text,
)
from chatgate.model.text_ids import PLURALS, TextId
from chatgate.presentation.degrade import adapt
from chatgate.presentation.limits import PresentationLimits
from chatgate.texts import LANGUAGES, Catalog, style_for
from chatgate.texts.catalog import plural_category
from chatgate.texts.voice import Voice
from tests.texts.test_catalog import OPERATOR_WORDS

SHIPPED = sorted(LANGUAGES)


def _needed(language: str) -> set[str]:
    """The categories whole counts reach in ``language``, plus "other" (the fallback)."""
    rule = Locale.parse(language).plural_form
    return {rule(n) for n in range(0, 1001)} | {"other"}


@pytest.mark.parametrize("language", SHIPPED)
@pytest.mark.parametrize("text_id", sorted(PLURALS))
def test_every_counting_text_has_the_forms_its_language_needs(
    language: str, text_id: TextId
) -> None:
    template = LANGUAGES[language][text_id]
    assert isinstance(template, dict), f"{text_id} in {language} needs plural forms"
    assert set(template) == _needed(language)


@pytest.mark.parametrize("language", SHIPPED)
def test_only_counting_texts_have_plural_forms(language: str) -> None:
    plural = {t for t, v in LANGUAGES[language].items() if not isinstance(v, str)}
    assert plural == set(PLURALS)


@pytest.mark.parametrize(
    ("language", "count", "category"),
    [("en", 1, "one"), ("en", 0, "other"), ("en", 2, "other"), ("de", 1, "one"),
     ("fr", 0, "one"), ("fr", 1, "one"), ("fr", 2, "other"), ("es", 1, "one"),
     ("es", 5, "other"), ("ru", 1, "one"), ("ru", 3, "few"), ("ru", 5, "many"),
     ("ru", 11, "many"), ("ru", 21, "one"), ("ru", 22, "few"), ("ru", 111, "many")],
)  # fmt: skip
def test_plural_categories_come_from_babel(language: str, count: int, category: str) -> None:
    assert plural_category(language, count) == category


@pytest.mark.parametrize(
    ("language", "count", "expected"),
    [("en", 1, "at most 1 file per message is read"),
     ("en", 3, "at most 3 files per message are read"),
     ("de", 1, "höchstens 1 Datei gelesen"), ("de", 4, "höchstens 4 Dateien gelesen"),
     ("es", 1, "como máximo 1 archivo por"), ("es", 2, "como máximo 2 archivos por"),
     ("fr", 1, "au plus 1 fichier est lu"), ("fr", 2, "au plus 2 fichiers sont lus"),
     ("ru", 1, "не больше 1 файла."), ("ru", 3, "не больше 3 файлов."),
     ("ru", 5, "не больше 5 файлов."), ("ru", 21, "не больше 21 файла.")],
)  # fmt: skip
def test_counts_read_naturally(language: str, count: int, expected: str) -> None:
    text = Catalog().render(TextId.MEDIA_TOO_MANY, language, name="a.pdf", count=count)
    assert expected in text


def test_an_override_is_one_template_for_every_count() -> None:
    catalog = Catalog(overrides={TextId.STATUS_HISTORY: {"*": "{count} in memory"}})
    assert catalog.render(TextId.STATUS_HISTORY, "ru", count=1) == "1 in memory"
    assert catalog.render(TextId.STATUS_HISTORY, "ru", count=5) == "5 in memory"


@pytest.mark.parametrize(
    ("language", "history", "queued", "lines"),
    [("en", 1, 0, ["I'm up and running.", "Agent: support (gpt-x)",
                   "This conversation: 1 message in context", "Working on your message now."]),
     ("en", 4, 2, ["I'm up and running.", "Agent: support (gpt-x)",
                   "This conversation: 4 messages in context",
                   "Working on your message now, 2 more waiting."]),
     ("de", 2, 1, ["Ich bin bereit.", "Assistent: support (gpt-x)",
                   "Dieses Gespräch: 2 Nachrichten im Kontext",
                   "Ich arbeite gerade an deiner Nachricht, 1 weitere wartet."]),
     ("ru", 5, 3, ["Я на связи и работаю.", "Ассистент: support (gpt-x)",
                   "В этом разговоре: 5 сообщений в контексте",
                   "Работаю над вашим сообщением, ещё 3 ждут."])],
)  # fmt: skip
def test_status_reply(language: str, history: int, queued: int, lines: list[str]) -> None:
    voice = Voice(language=language)
    text = voice.status(agent="support", model="gpt-x", history=history, queued=queued,
                        running=True)  # fmt: skip
    assert text.split("\n") == lines


def test_status_without_a_model_or_a_running_turn() -> None:
    text = Voice(language="fr").status(
        agent="support", model=None, history=0, queued=0, running=False
    )
    assert text.split("\n") == [
        "Je suis opérationnel.",
        "Assistant : support",
        "Cette conversation : 0 message en contexte",  # French counts 0 as one
    ]


NARROW = PresentationLimits(
    supports_buttons=True, max_buttons=3, supports_tables=False,
    max_table_rows=2, max_table_cols=2,
)  # fmt: skip
CROWDED = OutboundMessage(
    (Text("Pick one"), Buttons(tuple(Button(f"b{i}", f"v{i}") for i in range(5))),
     Table(("a", "b", "c"), tuple((str(i), "x", "y") for i in range(5))))
)  # fmt: skip


@pytest.mark.parametrize(
    ("language", "note"),
    [("en", "(Note: 2 buttons dropped; table truncated to 2 of 5 rows; "
            "table truncated to 2 of 3 columns; 1 table rendered as text.)"),
     ("de", "(Hinweis: 2 Schaltflächen weggelassen; Tabelle auf 2 von 5 Zeilen gekürzt; "
            "Tabelle auf 2 von 3 Spalten gekürzt; 1 Tabelle als Text dargestellt.)"),
     ("ru", "(Примечание: 2 кнопки убраны; таблица сокращена до 2 из 5 строк; "
            "таблица сокращена до 2 из 3 столбцов; 1 таблица показана текстом.)")],
)  # fmt: skip
def test_the_degrade_note_is_worded_for_the_reader(language: str, note: str) -> None:
    _, report = adapt(CROWDED, NARROW)
    assert report is not None
    assert Voice(language=language).degrade_note(report) == note
    assert report.note.startswith("(Note: 2 buttons dropped")  # the English operator wording


def test_every_note_item_is_a_catalog_text() -> None:
    """Each id presentation names exists, with the placeholders it fills."""
    import chatgate.presentation.degrade as degrade

    source = Path(degrade.__file__).read_text(encoding="utf-8")
    named = set(re.findall(r'"(degrade\.[a-z_]+)"', source))
    assert named and named <= {t.value for t in TextId}
    assert {t.value for t in TextId if t.value.startswith("degrade.")} - named == {"degrade.note"}


@pytest.mark.parametrize("language", SHIPPED)
def test_whatsapp_menu_words_come_from_the_catalog(language: str) -> None:
    voice = Voice(language=language)
    words = MenuWords(voice.text(TextId.MENU_CHOOSE), voice.text(TextId.MENU_OPEN_LIST))
    menu = Select(tuple(SelectOption(f"o{i}", f"v{i}") for i in range(6)))
    [rendered] = render(OutboundMessage((menu,)), words=words)
    interactive = rendered.native["payload"]["interactive"]
    assert interactive["body"]["text"] == LANGUAGES[language][TextId.MENU_CHOOSE]
    assert interactive["action"]["button"] == LANGUAGES[language][TextId.MENU_OPEN_LIST]
    assert MenuWords() == MenuWords("Choose an option:", "Choose…")  # English without a catalog


@pytest.mark.parametrize("language", SHIPPED)
@pytest.mark.parametrize("platform", ["telegram", "slack", "discord", "webchat", "whatsapp"])
def test_no_rendered_text_in_the_default_mode_names_operator_things(
    language: str, platform: str
) -> None:
    """The check on every id, extended to what is composed from them: help (minus the
    commands a user types), status, the degrade note, the empty-answer fallback."""
    voice = Voice(language=language, commands=style_for(platform, None))
    _, report = adapt(CROWDED, NARROW)
    assert report is not None
    composed = [
        voice.help(),
        voice.status(agent="support", model=None, history=3, queued=1, running=True),
        voice.degrade_note(report),
        voice.text(TextId.EMPTY_REPLY),
        voice.text(TextId.MENU_CHOOSE),
    ]
    for text in composed:
        for name in ("new", "stop", "status", "jobs", "help"):
            text = text.replace(voice.commands.form(name), "")
        assert not OPERATOR_WORDS.search(text), text


@pytest.mark.parametrize(
    ("platform", "form"), [("telegram", "/jobs"), ("slack", "/chatgate jobs"), ("discord", "/jobs")]
)
def test_help_lists_jobs_in_the_platform_form(platform: str, form: str) -> None:
    help_text = Voice(commands=style_for(platform, None)).help()
    assert f"{form} — your scheduled messages" in help_text.split("\n")


def test_new_ids_can_be_overridden_in_config() -> None:
    overrides = TextOverrides.model_validate({"status.history": "{count} so far"})
    assert overrides.as_overrides()[TextId.STATUS_HISTORY]
    with pytest.raises(ValueError, match="missing placeholder"):
        TextOverrides.model_validate({"status.history": "some"})


def test_channel_renderers_write_their_own_words_from_the_catalog() -> None:
    """Slack, Discord and Telegram renderers take the channel's words (its language)."""
    from chatgate.channels.discord.render import render as discord_render
    from chatgate.channels.slack.render import render as slack_render
    from chatgate.channels.telegram.render import render as telegram_render
    from chatgate.channels.words import RenderWords

    german = RenderWords(Voice(language="de").text)
    menu_only = OutboundMessage((Buttons((Button("Ja", "yes"),)),))
    assert telegram_render(menu_only, words=german)[0].text == "Wähle eine Option:"
    assert discord_render(menu_only, words=german)[0].text == "Wähle eine Option:"
    [slack] = slack_render(menu_only, words=german)
    assert slack.text == "Wähle eine Option:"
    crowded = OutboundMessage((Select(tuple(SelectOption(f"o{i}", f"v{i}") for i in range(105))),))
    slack_blocks = slack_render(crowded, words=german)[0].native["blocks"]
    assert (
        slack_blocks[0]["elements"][0]["text"] == "(Hinweis: 5 weitere Optionen nicht angezeigt.)"
    )
    assert slack_blocks[1]["elements"][0]["placeholder"]["text"] == "Auswählen…"
    russian = RenderWords(Voice(language="ru").text)
    assert russian.options_hidden(1) == "(Примечание: ещё 1 вариант не показан.)"
    assert russian.rows_hidden(5) == "ещё 5 строк не показано"
