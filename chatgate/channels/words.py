"""Words a channel's renderer writes itself, no agent having written them: the prompt over a
menu without text, a select's default placeholder, and counts of what found no room. They come
from the texts catalog (`menu.*`, `render.*`) in the channel's language, with the operator's
overrides; English when no catalog was given (a renderer called on its own)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from chatgate.model.text_ids import TextId
from chatgate.texts.catalog import Catalog

_ENGLISH = Catalog()


def _english(text_id: TextId, **values: object) -> str:
    return _ENGLISH.render(text_id, "en", None, None, **values)


@dataclass(frozen=True)
class RenderWords:
    text: Callable[..., str] = _english  # (text id, **values) -> the words

    @property
    def choose(self) -> str:
        """The text of a message that is only a menu."""
        return self.text(TextId.MENU_CHOOSE)

    @property
    def open_list(self) -> str:
        """A select's placeholder when the message names none."""
        return self.text(TextId.MENU_OPEN_LIST)

    def options_hidden(self, count: int) -> str:
        """The note "(Note: 3 more options not shown.)"."""
        items = self.text(TextId.RENDER_OPTIONS_HIDDEN, count=count)
        return self.text(TextId.DEGRADE_NOTE, items=items)

    def rows_hidden(self, count: int) -> str:
        return self.text(TextId.RENDER_ROWS_HIDDEN, count=count)

    def columns_hidden(self, count: int) -> str:
        return self.text(TextId.RENDER_COLUMNS_HIDDEN, count=count)


ENGLISH = RenderWords()


def words_for(kv: Mapping[str, Any], channel: str) -> RenderWords:
    """The render words of ``channel`` from the gateway's texts (``kv["voices"]``)."""
    voices = kv.get("voices")
    return RenderWords(voices.for_channel(channel).text) if voices is not None else ENGLISH
