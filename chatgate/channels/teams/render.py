"""Render an adapted OutboundMessage as Teams message activities (plain dicts the adapter turns
into the SDK's `MessageActivityInput`).

Pure. Text goes as Teams markdown (the subset Teams shows: emphasis, links, lists, code),
chunked to Teams' message size. Each file is a chunk of its own: the adapter offers it by
file consent in a personal chat, and sends its download link (chatgate's public URL) elsewhere.
Buttons and menus become one Adaptive Card on the last chunk:
a button is an `Action.Submit` whose data carries the choice under `chatgate_choice`, a link
button an `Action.OpenUrl`, a menu an `Input.ChoiceSet` with that id and a submit action, so
every press comes back as a message whose `value` names the choice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatgate.channels.base import Rendered
from chatgate.channels.teams.inbound import CHOICE_KEY
from chatgate.model.outbound import Block, Buttons, File, OutboundMessage, Select, Text
from chatgate.presentation.chunking import chunk_text
from chatgate.presentation.file_rules import human_size
from chatgate.presentation.render import block_to_markdown

Link = Callable[[File], str | None]  # a stored file's public download URL, None: no link
NO_LINK = "📎 {name} could not be attached: files reach Teams as links, and no public URL is set."

FORMAT = "teams"
MAX_TEXT_BYTES = 24_000  # Teams refuses messages over ~28 KB (text, card and envelope)
CARD_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_VERSION = "1.4"
CHOOSE = "Choose"
OFFER_KEY = "offer"  # a file chunk's File: offered by file consent in a personal chat


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def render(message: OutboundMessage, link: Link = lambda file: None) -> list[Rendered]:
    parts: list[str] = []
    widgets: list[Buttons | Select] = []
    files: list[File] = []
    for block in message.blocks:
        if isinstance(block, Buttons | Select):
            widgets.append(block)
            continue
        if isinstance(block, File):
            files.append(block)
            continue
        text = block.text if isinstance(block, Text) and not block.markdown else _markdown(block)
        if text.strip():
            parts.append(text)
    chunks = chunk_text("\n\n".join(parts), MAX_TEXT_BYTES, length=utf8_length) if parts else []
    out = [_text(chunk) for chunk in chunks]
    if widgets:
        body = out.pop().text if out else ""
        out.append(_card(body, widgets))
    return out + [_file_chunk(f, link(f)) for f in files]


def _file_chunk(file: File, url: str | None) -> Rendered:
    """A file: its link message, and the file itself for a consent offer (personal chats). Not
    an upload chunk: the stored file stays until its link expires (or its offer is answered)."""
    text = _file(file, url)
    native = {"activity": {"text": text, "textFormat": "markdown"}, OFFER_KEY: file}
    return Rendered(text, FORMAT, native)


def _file(file: File, url: str | None) -> str:
    """A file as a download link (the bot cannot upload outside file-consent in personal
    chats); its caption follows."""
    if url is None:
        return NO_LINK.format(name=file.name)
    line = f"📎 [{file.name}]({url}) ({human_size(file.size)})"
    return f"{line}\n{file.caption}" if file.caption else line


def _markdown(block: Block) -> str:
    return block_to_markdown(block)


def _text(chunk: str) -> Rendered:
    return Rendered(chunk, FORMAT, {"activity": {"text": chunk, "textFormat": "markdown"}})


def card_activity(text: str) -> dict[str, Any]:
    """``text`` as a card without actions (what a card is edited into: its buttons go)."""
    activity: dict[str, Any] = _card(text, []).native["activity"]
    return activity


def _card(text: str, widgets: list[Buttons | Select]) -> Rendered:
    body: list[dict[str, Any]] = []
    if text:
        body.append({"type": "TextBlock", "text": text, "wrap": True})
    actions: list[dict[str, Any]] = []
    for widget in widgets:
        if isinstance(widget, Buttons):
            actions.extend(_button(b.label, b.value, b.url, b.style) for b in widget.buttons)
        else:
            body.append(
                {
                    "type": "Input.ChoiceSet",
                    "id": CHOICE_KEY,
                    "placeholder": widget.placeholder,
                    "choices": [{"title": o.label, "value": o.value} for o in widget.options],
                }
            )
            actions.append({"type": "Action.Submit", "title": CHOOSE})
    card = {
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": CARD_VERSION,
        "body": body,
        "actions": actions,
    }
    attachment = {"contentType": CARD_TYPE, "content": card}
    return Rendered(text, FORMAT, {"activity": {"attachments": [attachment]}})


def _button(label: str, value: str | None, url: str | None, style: str) -> dict[str, Any]:
    if url is not None:
        return {"type": "Action.OpenUrl", "title": label, "url": url}
    action: dict[str, Any] = {
        "type": "Action.Submit",
        "title": label,
        "data": {CHOICE_KEY: value if value is not None else label},
    }
    if style == "primary":
        action["style"] = "positive"
    elif style == "danger":
        action["style"] = "destructive"
    return action
