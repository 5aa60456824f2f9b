"""User-facing texts: one catalog with ids, shipped languages, operator overrides, and the
Voice (``chatgate.texts.voice``) that renders them for one chat (its language and its
platform's command form).

Only the ids load with the package (policies return them); the catalog and Babel load when a
name from them is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from chatgate.model.text_ids import TextId

if TYPE_CHECKING:
    from chatgate.texts.catalog import LANGUAGES, Catalog, negotiate, template_problem
    from chatgate.texts.commands import CommandStyle, style_for

_LAZY = {
    "LANGUAGES": "catalog",
    "Catalog": "catalog",
    "negotiate": "catalog",
    "template_problem": "catalog",
    "CommandStyle": "commands",
    "style_for": "commands",
}

__all__ = [
    "LANGUAGES",
    "Catalog",
    "CommandStyle",
    "TextId",
    "negotiate",
    "style_for",
    "template_problem",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'chatgate.texts' has no attribute {name!r}")
    return getattr(importlib.import_module(f"chatgate.texts.{module}"), name)
