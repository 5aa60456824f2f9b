"""User-facing texts: one catalog with ids, shipped languages, operator overrides, and the
Voice (``chatgate.texts.voice``) that renders them for one chat (its language and its
platform's command form)."""

from chatgate.texts.catalog import LANGUAGES, Catalog, negotiate, template_problem
from chatgate.texts.commands import CommandStyle, style_for
from chatgate.texts.ids import TextId

__all__ = [
    "LANGUAGES",
    "Catalog",
    "CommandStyle",
    "TextId",
    "negotiate",
    "style_for",
    "template_problem",
]
