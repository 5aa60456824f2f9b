"""Platform-neutral outbound message model and its JSON-friendly dict codec.

An agent reply becomes an `OutboundMessage` of typed blocks; presentation adapts it to a
channel's limits and each channel renders it natively. All types are frozen and use tuples so
messages can be shared, compared and hashed safely.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

ButtonStyle = Literal["default", "primary", "danger"]
_STYLES: frozenset[str] = frozenset(get_args(ButtonStyle))
FileKind = Literal["image", "document", "audio", "voice", "video"]
FILE_KINDS: frozenset[str] = frozenset(get_args(FileKind))
DEFAULT_PLACEHOLDER = "Choose…"


@dataclass(frozen=True)
class Text:
    """A paragraph of reply text; `markdown` marks it as our CommonMark-ish dialect."""

    text: str
    markdown: bool = True


@dataclass(frozen=True)
class Button:
    """A clickable button: `value` is the callback payload, `url` makes it a link button."""

    label: str
    value: str | None = None
    url: str | None = None
    style: ButtonStyle = "default"


@dataclass(frozen=True)
class Buttons:
    """A row (or grid) of buttons offered together."""

    buttons: tuple[Button, ...]


@dataclass(frozen=True)
class SelectOption:
    """One choice of a select menu."""

    label: str
    value: str


@dataclass(frozen=True)
class Select:
    """A drop-down menu of options."""

    options: tuple[SelectOption, ...]
    placeholder: str = DEFAULT_PLACEHOLDER
    action_id: str = "select"


@dataclass(frozen=True)
class Table:
    """Tabular data; rows may be ragged (shorter or longer than `columns`)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Series:
    """One named data series of a chart."""

    label: str
    points: tuple[float, ...]


@dataclass(frozen=True)
class Chart:
    """A chart of one or more series; `kind` is e.g. "bar", "line", "pie"."""

    kind: str
    series: tuple[Series, ...]
    caption: str = ""


@dataclass(frozen=True)
class Image:
    """An image by URL with alternative text."""

    url: str
    alt: str = ""


@dataclass(frozen=True)
class File:
    """A file the reply carries: an image, document, audio, voice note or video.

    An agent gives its bytes (`data`), a local `path` (python agents only) or a `url`; before the
    answer is recorded the gateway stores it and keeps only `ref` (an id in the outgoing-file
    store) and `size`, so a resumed or replayed answer uploads the same file again.
    """

    name: str
    mime: str = "application/octet-stream"
    kind: FileKind = "document"
    caption: str = ""
    size: int = 0
    ref: str = ""
    data: bytes | None = None
    path: str = ""
    url: str = ""

    @property
    def stored(self) -> bool:
        return bool(self.ref)


@dataclass(frozen=True)
class Divider:
    """A visual separator."""


@dataclass(frozen=True)
class Context:
    """Small secondary text (notes, footers)."""

    text: str


Block = Text | Buttons | Select | Table | Chart | Image | File | Divider | Context


def format_number(value: float) -> str:
    """Render a chart point compactly: integral values without ".0"."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _table_strings(block: Table) -> list[str]:
    lines = [" | ".join(block.columns)] if block.columns else []
    return lines + [" | ".join(row) for row in block.rows]


def _chart_strings(block: Chart) -> list[str]:
    lines = [block.caption or f"{block.kind} chart"]
    return lines + [
        f"{s.label}: {', '.join(format_number(p) for p in s.points)}" for s in block.series
    ]


# Every user-visible string of a block, in display order, by block type.
_STRINGS: dict[type, Callable[[Any], list[str]]] = {
    Text: lambda b: [b.text],
    Context: lambda b: [b.text],
    Buttons: lambda b: [s for x in b.buttons for s in (x.label, x.url or "")],
    Select: lambda b: [b.placeholder, *(o.label for o in b.options)],
    Table: _table_strings,
    Chart: _chart_strings,
    Image: lambda b: [b.alt, b.url],
    File: lambda b: [f"[{b.kind}: {b.name}]", b.caption],
}


def _block_strings(block: Block) -> list[str]:
    """Every user-visible string of one block, in display order."""
    strings = _STRINGS.get(type(block))
    return strings(block) if strings is not None else []


@dataclass(frozen=True)
class OutboundMessage:
    """A reply as an ordered tuple of blocks."""

    blocks: tuple[Block, ...]

    @classmethod
    def from_text(cls, text: str) -> OutboundMessage:
        """A message of one markdown Text block."""
        return cls(blocks=(Text(text),))

    @property
    def plain_text(self) -> str:
        """All textual content joined by newlines, for logs and transcripts."""
        return "\n".join(s for block in self.blocks for s in _block_strings(block) if s)


# --- dict codec -------------------------------------------------------------------------------


def _str(data: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string")
    return value


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string or null")
    return value


def _bool(data: Mapping[str, Any], key: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{key!r} must be true or false")
    return value


def _list(data: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = data.get(key, [])
    if not isinstance(value, list | tuple):
        raise ValueError(f"{key!r} must be a list")
    return value


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be an object")
    return value


def _cell(value: Any) -> str:
    """Table cells accept strings and scalars (agents often emit numbers)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        raise ValueError(f"table cell {value!r} must be a string or number")
    if isinstance(value, int | float):
        return format_number(float(value)) if isinstance(value, float) else str(value)
    raise ValueError(f"table cell {value!r} must be a string or number")


def _point(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"chart point {value!r} must be a number")
    return float(value)


def _button(data: Any) -> Button:
    d = _mapping(data, "button")
    style = d.get("style", "default")
    if style not in _STYLES:
        raise ValueError(f"button style {style!r} must be one of {sorted(_STYLES)}")
    return Button(_str(d, "label"), _opt_str(d, "value"), _opt_str(d, "url"), style)


def _option(data: Any) -> SelectOption:
    d = _mapping(data, "option")
    return SelectOption(_str(d, "label"), _str(d, "value"))


def _int(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key!r} must be a whole number >= 0")
    return value


def _file(d: Mapping[str, Any]) -> File:
    kind = d.get("kind", "document")
    if kind not in FILE_KINDS:
        raise ValueError(f"file kind {kind!r} must be one of {sorted(FILE_KINDS)}")
    data: bytes | None = None
    encoded = _opt_str(d, "data_base64")
    if encoded is not None:
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("'data_base64' is not valid base64") from None
    file = File(
        name=_str(d, "name", "file"),
        mime=_str(d, "mime", "application/octet-stream"),
        kind=kind,
        caption=_str(d, "caption", ""),
        size=_int(d, "size"),
        ref=_str(d, "ref", ""),
        data=data,
        path=_str(d, "path", ""),
        url=_str(d, "url", ""),
    )
    sources = sum(1 for s in (file.ref, file.data is not None, file.path, file.url) if s)
    if sources != 1:
        raise ValueError("a file needs exactly one of 'data_base64', 'path', 'url' or 'ref'")
    return file


def _series(data: Any) -> Series:
    d = _mapping(data, "series")
    return Series(_str(d, "label"), tuple(_point(p) for p in _list(d, "points")))


def _row(data: Any) -> tuple[str, ...]:
    if not isinstance(data, list | tuple):
        raise ValueError("table row must be a list")
    return tuple(_cell(c) for c in data)


_DECODERS: dict[str, Callable[[Mapping[str, Any]], Block]] = {
    "text": lambda d: Text(_str(d, "text"), _bool(d, "markdown", True)),
    "buttons": lambda d: Buttons(tuple(_button(b) for b in _list(d, "buttons"))),
    "select": lambda d: Select(
        tuple(_option(o) for o in _list(d, "options")),
        _str(d, "placeholder", DEFAULT_PLACEHOLDER),
        _str(d, "action_id", "select"),
    ),
    "table": lambda d: Table(
        tuple(_cell(c) for c in _list(d, "columns")), tuple(_row(r) for r in _list(d, "rows"))
    ),
    "chart": lambda d: Chart(
        _str(d, "kind", "bar"),
        tuple(_series(s) for s in _list(d, "series")),
        _str(d, "caption", ""),
    ),
    "image": lambda d: Image(_str(d, "url"), _str(d, "alt", "")),
    "file": _file,
    "divider": lambda d: Divider(),
    "context": lambda d: Context(_str(d, "text")),
}


def message_from_dict(data: Mapping[str, Any]) -> OutboundMessage:
    """Decode `{"blocks": [{"type": "text", "text": ...}, ...]}` from a python/http agent.

    Raises ValueError naming the offending block index so agent authors can fix their output.
    """
    if not isinstance(data, Mapping):
        raise ValueError("message must be an object with a 'blocks' list")
    raw = data.get("blocks")
    if not isinstance(raw, list | tuple):
        raise ValueError("message must have a 'blocks' list")
    blocks: list[Block] = []
    for index, item in enumerate(raw):
        try:
            block = _mapping(item, "block")
            kind = block.get("type")
            decoder = _DECODERS.get(kind) if isinstance(kind, str) else None
            if decoder is None:
                raise ValueError(f"unknown type {kind!r}; expected one of {sorted(_DECODERS)}")
            blocks.append(decoder(block))
        except ValueError as exc:
            raise ValueError(f"block {index}: {exc}") from None
    return OutboundMessage(tuple(blocks))


def _block_to_dict(block: Block) -> dict[str, Any]:
    match block:
        case Text(text, markdown):
            return {"type": "text", "text": text, "markdown": markdown}
        case Buttons(buttons):
            items = [
                {"label": b.label, "value": b.value, "url": b.url, "style": b.style}
                for b in buttons
            ]
            return {"type": "buttons", "buttons": items}
        case Select(options, placeholder, action_id):
            opts = [{"label": o.label, "value": o.value} for o in options]
            return {
                "type": "select",
                "options": opts,
                "placeholder": placeholder,
                "action_id": action_id,
            }
        case Table(columns, rows):
            return {"type": "table", "columns": list(columns), "rows": [list(r) for r in rows]}
        case Chart(kind, series, caption):
            data = [{"label": s.label, "points": list(s.points)} for s in series]
            return {"type": "chart", "kind": kind, "series": data, "caption": caption}
        case Image(url, alt):
            return {"type": "image", "url": url, "alt": alt}
        case File() as f:
            return _file_to_dict(f)
        case Divider():
            return {"type": "divider"}
        case Context(text):
            return {"type": "context", "text": text}
    raise TypeError(f"not a block: {block!r}")  # pragma: no cover - exhaustive above


def _file_to_dict(f: File) -> dict[str, Any]:
    """A file block with where its bytes are: a stored ref, inline data, a path or a URL."""
    out: dict[str, Any] = {
        "type": "file",
        "name": f.name,
        "mime": f.mime,
        "kind": f.kind,
        "caption": f.caption,
        "size": f.size,
    }
    if f.ref:
        out["ref"] = f.ref
    elif f.data is not None:
        out["data_base64"] = base64.b64encode(f.data).decode("ascii")
    elif f.path:
        out["path"] = f.path
    else:
        out["url"] = f.url
    return out


def message_to_dict(msg: OutboundMessage) -> dict[str, Any]:
    """Encode a message as plain JSON-compatible data; inverse of `message_from_dict`."""
    return {"blocks": [_block_to_dict(b) for b in msg.blocks]}
