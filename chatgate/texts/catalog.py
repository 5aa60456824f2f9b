"""The text catalog: shipped languages, operator overrides, placeholder checks, and rendering.

Locale tags are parsed with Babel and durations are worded (and pluralised) by Babel, so a
text reads "2 Minuten" or "2 минуты" without hand-rolled grammar; a text that counts something
(``{count}``) ships one form per plural category and Babel's plural rules pick the form.
Babel is imported on first use (a message with a locale tag, a counted or worded text), not at
start: ~0.8 MB of an idle gateway's memory.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

from chatgate.model.text_ids import Template, TextId, placeholders
from chatgate.texts import de, en, es, fr, ru

DEFAULT_LANGUAGE = "en"
ANY_LANGUAGE = "*"  # an override that applies whatever the language
LANGUAGES: dict[str, Mapping[TextId, Template]] = {
    "en": en.TEXTS,
    "de": de.TEXTS,
    "es": es.TEXTS,
    "fr": fr.TEXTS,
    "ru": ru.TEXTS,
}

# text id -> language (or ANY_LANGUAGE) -> template
Overrides = Mapping[TextId, Mapping[str, str]]


def negotiate(tag: str | None) -> str | None:
    """The shipped language for a platform locale tag (``de-AT``, ``pt_BR``, ``ru``), or None."""
    if not tag or not tag.strip():
        return None
    from babel import Locale, UnknownLocaleError

    try:
        locale = Locale.parse(tag.strip().replace("-", "_"))
    except (ValueError, TypeError, UnknownLocaleError):
        return None
    return locale.language if locale.language in LANGUAGES else None


def template_problem(text_id: TextId, template: str) -> str | None:
    """Why ``template`` cannot stand for ``text_id`` (bad syntax, unknown or missing
    placeholder), or None when it can."""
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        return f"not a valid template ({exc}); write a literal brace as {{{{ or }}}}"
    expected = placeholders(text_id)
    unknown = sorted(set(fields) - expected)
    if unknown:
        allowed = ", ".join(f"{{{p}}}" for p in sorted(expected)) or "none"
        return f"unknown placeholder {{{unknown[0]}}} (allowed here: {allowed})"
    missing = sorted(expected - set(fields))
    if missing:
        return f"missing placeholder {{{missing[0]}}}"
    return None


def plural_category(language: str, count: int) -> str:
    """Babel's plural category of ``count`` in ``language``: "one", "few", "many" or "other"."""
    from babel import Locale

    return str(Locale.parse(language).plural_form(abs(count)))


def pick(template: Template, language: str, count: object = None) -> str:
    """The form of a template for ``count`` (a single template serves every count)."""
    if isinstance(template, str):
        return template
    category = plural_category(language, count) if isinstance(count, int) else "other"
    return template.get(category) or template["other"]


def forms(template: Template) -> list[str]:
    """Every form of a template (one for a plain one)."""
    return [template] if isinstance(template, str) else list(template.values())


WaitUnit = Literal["day", "hour", "minute", "second"]
_WAIT_UNITS: tuple[tuple[WaitUnit, int], ...] = (("day", 86_400), ("hour", 3_600), ("minute", 60))
_WAIT_THRESHOLD = 1.5  # "90 minutes" rather than "1 hour" below one and a half
_WAIT_ROUNDED = 10  # from this many units on, a remainder may round ("10 minutes" for 601 s)


def wait_unit(whole: int) -> WaitUnit:
    """The unit a wait of ``whole`` seconds is said in: the largest that says it exactly, or
    nearly (at least ten of it): 90 s is "90 seconds", never "2 minutes"."""
    for unit, size in _WAIT_UNITS:
        amount = whole / size
        if amount >= _WAIT_THRESHOLD and (whole % size == 0 or amount >= _WAIT_ROUNDED):
            return unit
    return "second"


def format_wait(seconds: float, language: str) -> str:
    """A wait worded for ``language``: "45 seconds", "90 seconds", "2 Minuten", "1 час"."""
    from babel.dates import format_timedelta

    whole = max(1, math.ceil(seconds)) if math.isfinite(seconds) else 60
    return str(
        format_timedelta(
            timedelta(seconds=whole),
            locale=language,
            threshold=math.inf,  # the granularity decides the unit
            granularity=wait_unit(whole),
        )
    )


def format_size(size: int, language: str) -> str:
    """A file size worded for ``language``: "20 MB", "20 Mo", "812 kB"."""
    from babel.units import format_unit

    if size >= 1024 * 1024:
        value, unit = size / (1024 * 1024), "digital-megabyte"
    else:
        value, unit = max(1, round(size / 1024)), "digital-kilobyte"
    return str(format_unit(value, unit, length="short", format="#,##0.#", locale=language))


@dataclass(frozen=True)
class Catalog:
    """Every user-facing text by id and language, with the operator's overrides on top:
    a channel's override wins over an agent's, an agent's over a global one, and an exact
    language over ``*``."""

    default_language: str = DEFAULT_LANGUAGE
    overrides: Overrides = field(default_factory=dict)
    channel_overrides: Mapping[str, Overrides] = field(default_factory=dict)
    channel_languages: Mapping[str, str] = field(default_factory=dict)
    agent_overrides: Mapping[str, Overrides] = field(default_factory=dict)

    def language_for(self, channel: str | None, user_tag: str | None) -> str:
        """The user's own language where the platform tells it and we ship it, else the
        channel's ``language``, else the gateway's."""
        return (
            negotiate(user_tag)
            or (self.channel_languages.get(channel) if channel else None)
            or self.default_language
        )

    def template(
        self,
        text_id: TextId,
        language: str,
        channel: str | None = None,
        agent: str | None = None,
        count: object = None,
    ) -> str:
        """The template an override or the shipped catalog gives; for a counting text the
        form for ``count`` (an override is one template for every count)."""
        scopes = [
            self.channel_overrides.get(channel, {}) if channel else {},
            self.agent_overrides.get(agent, {}) if agent else {},
            self.overrides,
        ]
        for scope in scopes:
            by_language = scope.get(text_id)
            if by_language:
                found = by_language.get(language) or by_language.get(ANY_LANGUAGE)
                if found:
                    return found
        if language not in LANGUAGES:
            language = DEFAULT_LANGUAGE
        found_shipped = LANGUAGES[language].get(text_id)
        if not found_shipped:
            language, found_shipped = DEFAULT_LANGUAGE, LANGUAGES[DEFAULT_LANGUAGE][text_id]
        return pick(found_shipped, language, count)

    def render(
        self,
        text_id: TextId,
        language: str,
        channel: str | None = None,
        agent: str | None = None,
        **values: object,
    ) -> str:
        template = self.template(text_id, language, channel, agent, values.get("count"))
        return template.format(**values)
