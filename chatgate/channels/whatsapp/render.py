"""Render an adapted OutboundMessage as WhatsApp Cloud API message bodies.

Pure: each `Rendered` carries in `native["payload"]` the type-specific part of a `/messages`
request (the adapter adds recipient and quote); `plain_text` is its text without formatting (a
template parameter when the 24-hour window is closed; a menu keeps its own in
`native["plain"]`). Text is converted to WhatsApp formatting, then cut into 4,096-character
chunks. A message's one menu rides on its
last chunk when that fits an interactive body (1,024 characters), else it follows with a short
prompt: up to 3 choices as reply buttons, more as a list (10 rows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chatgate.channels.base import Rendered
from chatgate.channels.whatsapp.markdown import markdown_to_whatsapp
from chatgate.model.outbound import (
    DEFAULT_PLACEHOLDER,
    Block,
    Buttons,
    OutboundMessage,
    Select,
    Text,
)
from chatgate.model.text_ids import TextId
from chatgate.presentation.chunking import chunk_text
from chatgate.presentation.degrade import callback_hash
from chatgate.presentation.markdown import markdown_to_plain
from chatgate.presentation.render import block_to_markdown
from chatgate.texts import en

FORMAT = "whatsapp"
MAX_TEXT = 4096
MAX_BODY = 1024  # an interactive message's body
MAX_BUTTONS = 3
MAX_ROWS = 10
BUTTON_TITLE_MAX = 20
ROW_TITLE_MAX = 24
LIST_BUTTON_MAX = 20
ID_MAX_BYTES = 200  # list row ids (reply button ids allow 256)
Shorten = Callable[[str], str]
Choice = tuple[str, str]  # (title, id)


@dataclass(frozen=True)
class MenuWords:
    """The words a menu needs when the message gives none, in the reader's language (the
    catalog's `menu.choose` and `menu.open_list`)."""

    choose: str = str(en.TEXTS[TextId.MENU_CHOOSE])  # a menu body whose text went earlier
    open_list: str = str(en.TEXTS[TextId.MENU_OPEN_LIST])  # the list's open button


def render(
    message: OutboundMessage, *, shorten: Shorten = callback_hash, words: MenuWords = MenuWords()
) -> list[Rendered]:
    """Text chunks, the menu (if any) on the last message; only the first quotes the trigger."""
    parts: list[str] = []
    menu: Buttons | Select | None = None
    for block in message.blocks:
        if menu is None and _is_menu(block):
            assert isinstance(block, Buttons | Select)
            menu = block
            continue
        text = _text(block)
        if text.strip():
            parts.append(text)
    chunks = chunk_text("\n\n".join(parts), MAX_TEXT)
    out = [_text_message(chunk) for chunk in chunks]
    if menu is not None:
        body = chunks[-1] if chunks and len(chunks[-1]) <= MAX_BODY else _prompt(menu, words)
        if chunks and body is chunks[-1]:
            out.pop()
        out.append(_menu_message(menu, body, shorten, words))
    return [Rendered(r.text, r.format, {**r.native, "quote": i == 0}) for i, r in enumerate(out)]


def _is_menu(block: Block) -> bool:
    if isinstance(block, Buttons):
        return any(b.url is None for b in block.buttons)
    return isinstance(block, Select) and bool(block.options)


def _text(block: Block) -> str:
    """A block as WhatsApp text (plain text as written: WhatsApp has no escapes)."""
    if isinstance(block, Text) and not block.markdown:
        return block.text
    return markdown_to_whatsapp(block_to_markdown(block))


def _text_message(chunk: str) -> Rendered:
    preview = "http://" in chunk or "https://" in chunk
    payload = {"type": "text", "text": {"body": chunk, "preview_url": preview}}
    return Rendered(chunk, FORMAT, {"payload": payload})  # its plain text: `plain_text`


def plain_text(rendered: Rendered) -> str:
    """``rendered`` without formatting (a template parameter), worked out only when a send
    needs it: a menu carries its own, a text chunk is converted, anything else is as it is."""
    plain = rendered.native.get("plain")
    if plain is not None:
        return str(plain)
    return markdown_to_plain(rendered.text) if rendered.format == FORMAT else rendered.text


def _prompt(menu: Buttons | Select, words: MenuWords) -> str:
    if isinstance(menu, Select) and menu.placeholder != DEFAULT_PLACEHOLDER:
        return _clip(menu.placeholder, MAX_BODY)
    return words.choose


def _choices(menu: Buttons | Select, shorten: Shorten) -> list[Choice]:
    """(title, id) of each choice, first of each id only (WhatsApp refuses repeated ids)."""
    if isinstance(menu, Buttons):
        pairs = [(b.label, b.value or b.label) for b in menu.buttons if b.url is None]
    else:
        pairs = [(o.label, o.value or o.label) for o in menu.options]
    seen: dict[str, str] = {}
    for title, value in pairs:
        key = (
            value if len(value.encode("utf-8", "surrogatepass")) <= ID_MAX_BYTES else shorten(value)
        )
        seen.setdefault(key, title)
    return [(title, key) for key, title in seen.items()]


def _menu_message(
    menu: Buttons | Select, body: str, shorten: Shorten, words: MenuWords
) -> Rendered:
    choices = _choices(menu, shorten)
    interactive: dict[str, Any]
    if len(choices) <= MAX_BUTTONS:
        buttons = [
            {"type": "reply", "reply": {"id": key, "title": _title(title, BUTTON_TITLE_MAX)}}
            for title, key in choices
        ]
        interactive = {"type": "button", "action": {"buttons": buttons}}
    else:
        named = isinstance(menu, Select) and menu.placeholder != DEFAULT_PLACEHOLDER
        label = menu.placeholder if isinstance(menu, Select) and named else words.open_list
        rows = [{"id": key, "title": _title(title, ROW_TITLE_MAX)} for title, key in choices]
        action = {"button": _title(label, LIST_BUTTON_MAX), "sections": [{"rows": rows[:MAX_ROWS]}]}
        interactive = {"type": "list", "action": action}
    interactive["body"] = {"text": body}
    payload = {"type": "interactive", "interactive": interactive}
    plain = (
        markdown_to_plain(body)
        + "\n"
        + "\n".join(f"{n}. {title}" for n, (title, _) in enumerate(choices, start=1))
    )
    return Rendered(body, FORMAT, {"payload": payload, "plain": plain})


def _title(text: str, limit: int) -> str:
    return _clip(" ".join(text.split()) or "…", limit)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
