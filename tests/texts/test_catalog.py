"""The text catalog: every id in every language with the right placeholders, the audience rule,
language negotiation, command forms, and operator overrides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chatgate.config.text_models import TextOverrides
from chatgate.model.reasons import FailureReason
from chatgate.model.text_ids import TextId
from chatgate.policies.failure import failure_reply
from chatgate.texts import LANGUAGES, Catalog, negotiate, style_for, template_problem
from chatgate.texts.catalog import ANY_LANGUAGE, forms
from chatgate.texts.voice import Voice, user_text

SAMPLE = {"wait": "5 s", "new": "/new", "hello": "Hi!", "code": "ABCD2345", "expires": "1 h",
          "name": "Ann", "max": "20 MB", "duration": "10 min", "count": 3, "text": "hi",
          "on": "/bot on",
          "tool": "github.create_issue", "arguments": "title: x",
          "assistant": "support", "model": "gpt", "items": "2 buttons dropped", "kept": 2,
          "id": "nag", "schedule": "every 60s", "when": "soon", "time": "09:00",
          "command": "/jobs rm ID", "tools": "github.search", "share": "80 %",
          "rule": "per-user-daily", "used": "$0.40", "limit": "$0.50",
          "sources": "tool_output:web.fetch"}  # fmt: skip
# What a chat user must never read in the default mode: config keys, files, our CLI.
OPERATOR_WORDS = re.compile(r"chatgate|gateway\.yaml|api_key|_file\b|\.ya?ml\b|`|config", re.I)


def test_the_shipped_languages() -> None:
    assert set(LANGUAGES) == {"en", "de", "es", "fr", "ru"}


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_id_has_a_text_in_every_language(language: str) -> None:
    assert set(LANGUAGES[language]) == set(TextId)


@pytest.mark.parametrize(
    ("language", "text_id"), [(lang, t) for lang in sorted(LANGUAGES) for t in TextId]
)
def test_placeholders_match_in_every_language(language: str, text_id: TextId) -> None:
    for template in forms(LANGUAGES[language][text_id]):
        assert template_problem(text_id, template) is None
        assert "{" not in template.format(**SAMPLE)  # renders fully


@pytest.mark.parametrize(
    ("language", "text_id"), [(lang, t) for lang in sorted(LANGUAGES) for t in TextId]
)
def test_no_user_text_names_operator_things(language: str, text_id: TextId) -> None:
    for template in forms(LANGUAGES[language][text_id]):
        assert not OPERATOR_WORDS.search(template)


@pytest.mark.parametrize("reason", list(FailureReason))
@pytest.mark.parametrize("platform", ["telegram", "slack", "discord", "webchat", "whatsapp"])
def test_failure_replies_for_users_are_plain(reason: FailureReason, platform: str) -> None:
    voice = Voice(commands=style_for(platform, None))
    text = voice.failure(failure_reply(reason, hint="fix agents.x.api_key", retry_after_s=30))
    typed = text.replace(voice.commands.form("new"), "")  # a command the user can type is fine
    assert not OPERATOR_WORDS.search(typed), text
    assert "{" not in text and "Next step for the operator" not in text


@pytest.mark.parametrize("reason", [r for r in FailureReason if r is not FailureReason.UNKNOWN])
@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_reason_a_turn_can_end_with_has_its_own_user_text(
    reason: FailureReason, language: str
) -> None:
    """No reason falls back to the generic "something went wrong" text."""
    voice = Voice(language=language)
    generic = voice.text(TextId.FAILURE_UNKNOWN)
    assert user_text(failure_reply(reason)) is not TextId.FAILURE_UNKNOWN
    assert voice.failure(failure_reply(reason)) != generic


def test_verbose_keeps_the_operator_detail() -> None:
    reply = failure_reply(FailureReason.AUTH_EXPIRED)
    assert "api_key" in Voice(verbose=True).failure(reply)
    assert "api_key" in reply.detail and "api_key" not in Voice().failure(reply)
    overflow = failure_reply(FailureReason.CONTEXT_OVERFLOW)
    slack = Voice(verbose=True, commands=style_for("slack", "/bot"))
    assert "send /bot new" in slack.failure(overflow)


@pytest.mark.parametrize(
    ("retry_after", "language", "fragment"),
    [(None, "en", "in a minute"), (7.0, "en", "in 7 seconds"), (600.0, "en", "in 10 minutes"),
     (120.0, "de", "in 2 Minuten"), (120.0, "ru", "через 2 минуты"),
     (3600.0, "es", "en 60 minutos"), (45.0, "fr", "dans 45\xa0secondes")],
)  # fmt: skip
def test_waits_are_worded_and_pluralised_per_language(
    retry_after: float | None, language: str, fragment: str
) -> None:
    text = Voice(language=language).failure(
        failure_reply(FailureReason.RATE_LIMIT, retry_after_s=retry_after)
    )
    assert fragment in text


@pytest.mark.parametrize(
    ("seconds", "language", "said"),
    [(1, "en", "1 second"), (45, "en", "45 seconds"), (90, "en", "90 seconds"),
     (90, "de", "90 Sekunden"), (120, "en", "2 minutes"), (150, "en", "150 seconds"),
     (601, "en", "10 minutes"), (3600, "en", "60 minutes"), (5400, "ru", "90 минут"),
     (7200, "en", "2 hours"), (86_400 * 3, "fr", "3\xa0jours"), (0.2, "en", "1 second")],
)  # fmt: skip
def test_a_wait_is_never_rounded_up_to_a_whole_unit_it_is_not(
    seconds: float, language: str, said: str
) -> None:
    assert Voice(language=language).wait(seconds) == said


@pytest.mark.parametrize(
    ("tag", "language"),
    [("de", "de"), ("de-AT", "de"), ("pt-BR", None), ("ru", "ru"), ("en_US", "en"),
     ("es-419", "es"), ("fr-CA", "fr"), ("", None), (None, None), ("x!", None), ("zz", None)],
)  # fmt: skip
def test_negotiate(tag: str | None, language: str | None) -> None:
    assert negotiate(tag) == language


@pytest.mark.parametrize(
    ("platform", "slash", "form"),
    [("telegram", None, "/new"), ("discord", None, "/new"), ("webchat", None, "/new"),
     ("slack", None, "/chatgate new"), ("slack", "/helpdesk", "/helpdesk new")],
)  # fmt: skip
def test_command_forms(platform: str, slash: str | None, form: str) -> None:
    voice = Voice(commands=style_for(platform, slash))
    assert voice.commands.form("new") == form
    assert form in voice.help()
    assert form in voice.failure(failure_reply(FailureReason.CONTEXT_OVERFLOW))


def test_slack_help_lists_no_command_slack_would_swallow() -> None:
    help_text = Voice(commands=style_for("slack", "/chatgate")).help()
    assert not re.search(r"(^|\s)/(new|stop|status|jobs|help)\b", help_text)
    assert help_text.count("/chatgate ") == 5


def test_language_choice_user_then_channel_then_gateway() -> None:
    catalog = Catalog(default_language="fr", channel_languages={"tg": "de"})
    assert catalog.language_for("tg", "ru-RU") == "ru"
    assert catalog.language_for("tg", "pt-BR") == "de"
    assert catalog.language_for("other", None) == "fr"


def test_overrides_channel_then_agent_then_global_exact_language_then_any() -> None:
    catalog = Catalog(
        overrides={TextId.STOPPED: {ANY_LANGUAGE: "Halted.", "de": "Angehalten."}},
        channel_overrides={"tg": {TextId.STOPPED: {"en": "Stopped (tg)."}}},
        agent_overrides={"sales": {TextId.STOPPED: {ANY_LANGUAGE: "Okay, stopped!"}}},
    )
    assert catalog.render(TextId.STOPPED, "en", "tg") == "Stopped (tg)."
    assert catalog.render(TextId.STOPPED, "en", "tg", "sales") == "Stopped (tg)."
    assert catalog.render(TextId.STOPPED, "de", "tg", "sales") == "Okay, stopped!"
    assert catalog.render(TextId.STOPPED, "de", "tg") == "Angehalten."
    assert catalog.render(TextId.STOPPED, "fr", "web") == "Halted."
    assert Voice(catalog=catalog, agent="sales").text(TextId.STOPPED) == "Okay, stopped!"
    assert catalog.render(TextId.NOTHING_TO_STOP, "fr") == LANGUAGES["fr"][TextId.NOTHING_TO_STOP]


@pytest.mark.parametrize(
    ("template", "problem"),
    [("Wait {wait}.", None), ("Wait.", "missing placeholder {wait}"),
     ("Wait {wiat}.", "unknown placeholder {wiat}"), ("Wait {wait} {0}.", "unknown placeholder"),
     ("Wait {wait", "not a valid template"), ("{{literal}} {wait}", None)],
)  # fmt: skip
def test_template_problems(template: str, problem: str | None) -> None:
    found = template_problem(TextId.RATE_LIMITED, template)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_override_model_knows_every_id() -> None:
    aliases = {info.alias for info in TextOverrides.model_fields.values()}
    assert aliases == {t.value for t in TextId}


def test_the_manual_lists_every_text_id() -> None:
    readme = (Path(__file__).resolve().parents[2] / "docs" / "texts.md").read_text(encoding="utf-8")
    assert [t.value for t in TextId if f"| `{t.value}` |" not in readme] == []
