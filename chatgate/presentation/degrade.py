"""Adapt a message to a channel's limits and report, visibly, everything that degraded.

Nothing is dropped silently: unsupported widgets become deterministic text, and whatever cannot
be kept (buttons or options over a cap, table cells beyond the clamp, lossy callback data) is
counted in a `DegradedDelivery` whose note the channel appends to the reply. The report names
each item by a text id of the catalog (`degrade.*`) with its count, so the gateway words the
note in the reader's language (`with_note(..., describe)`); `note` is the English wording.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from chatgate.model.outbound import (
    DEFAULT_PLACEHOLDER,
    Block,
    Button,
    Buttons,
    Chart,
    Context,
    File,
    Image,
    OutboundMessage,
    Select,
    SelectOption,
    Table,
    Text,
)
from chatgate.model.reasons import DegradeReason
from chatgate.presentation.file_rules import fit_file
from chatgate.presentation.limits import PresentationLimits
from chatgate.presentation.markdown import markdown_to_plain
from chatgate.presentation.render import (
    block_to_markdown,
    chart_to_text,
    choices_to_text,
    image_to_text,
    table_to_markdown,
    table_width,
)

REF_PREFIX = "ref:"
HASH_PREFIX = "h:"


@dataclass(frozen=True)
class NoteItem:
    """One line of the note: a catalog text id (``degrade.*``), its count and other values."""

    text_id: str
    count: int = 1
    values: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class DegradedDelivery:
    """What a channel could not render as sent; `reasons[i]` explains `dropped[i]`."""

    dropped: tuple[str, ...]
    reasons: tuple[DegradeReason, ...]
    note: str
    items: tuple[NoteItem, ...] = ()

    def __post_init__(self) -> None:
        if len(self.dropped) != len(self.reasons):
            raise ValueError("dropped and reasons must be aligned")


class CallbackStore(Protocol):
    """Keeps callback payloads too long for a channel; returns a short reference to them."""

    def put(self, value: str) -> str: ...


def callback_hash(value: str) -> str:
    """Short stable stand-in for a callback value that could not be stored ("h:" + 16 hex)."""
    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=8)
    return HASH_PREFIX + digest.hexdigest()


@dataclass(frozen=True)
class _Event:
    reason: DegradeReason
    noun: tuple[str, str] = ("", "")  # singular, plural
    verb: tuple[str, str] = ("", "")
    count: int = 1
    detail: str = ""  # a fixed description, reported once, instead of a counted phrase
    note: str = ""  # the catalog id of the counted phrase
    fixed: tuple[NoteItem, ...] = ()  # a detail's note items (reported once, like the detail)

    def items(self, count: int) -> tuple[NoteItem, ...]:
        return self.fixed if self.detail else (NoteItem(self.note, count),)

    def key(self) -> tuple[object, ...]:
        return (self.reason, self.detail) if self.detail else (self.reason, self.noun, self.verb)

    def describe(self, count: int) -> str:
        if self.detail:
            return self.detail
        one = count == 1
        return f"{count} {self.noun[0 if one else 1]} {self.verb[0 if one else 1]}"


_AS_TEXT = ("rendered as text", "rendered as text")
_DROPPED = ("dropped", "dropped")
_REPEATED = ("with a repeated value dropped", "with a repeated value dropped")
_SHORTENED = ("shortened", "shortened")
_BUTTON = ("button", "buttons")
_OPTION = ("option", "options")
_SELECT = ("select menu", "select menus")
_BUTTON_VALUE = ("button value", "button values")
_OPTION_VALUE = ("option value", "option values")
_LABEL = ("label", "labels")
_LINK_BUTTON = ("link button", "link buttons")
_MENU = ("menu", "menus")
_AS_LIST = ("shown as a list", "shown as a list")
_FILE = ("file", "files")
# The catalog ids (chatgate.texts, `degrade.*`) the note items name; presentation stays pure.
_N_LABELS = "degrade.labels_shortened"
_N_MENUS = "degrade.menus_as_text"
_N_BUTTON_VALUES = "degrade.button_values_shortened"
_N_OPTION_VALUES = "degrade.option_values_shortened"
_N_BUTTONS_DROPPED = "degrade.buttons_dropped"
_N_OPTIONS_DROPPED = "degrade.options_dropped"
_N_REPEATED = "degrade.options_repeated"
_N_FORMATTING = "degrade.formatting_plain"
_N_BTN_TEXT = "degrade.buttons_as_text"
_N_LINKS = "degrade.link_buttons_as_text"
_N_AS_LIST = "degrade.buttons_as_list"
_N_SELECT_BUTTONS = "degrade.selects_as_buttons"
_N_SELECT_TEXT = "degrade.selects_as_text"
_N_ROWS = "degrade.table_rows"
_N_COLUMNS = "degrade.table_columns"
_N_TABLES = "degrade.tables_as_text"
_N_CHARTS = "degrade.charts_as_text"
_N_IMAGES = "degrade.images_as_links"
_FILE_VERBS: dict[DegradeReason, tuple[tuple[str, str], tuple[str, str], str]] = {
    DegradeReason.FILE_UNSUPPORTED: (
        _FILE,
        ("not attached (this chat takes no files)",) * 2,
        "degrade.files_unsupported",
    ),
    DegradeReason.FILE_TOO_LARGE: (
        _FILE,
        ("over the size limit not attached",) * 2,
        "degrade.files_too_large",
    ),
    DegradeReason.FILE_AS_DOCUMENT: (
        _FILE,
        ("sent as a document", "sent as documents"),
        "degrade.files_as_documents",
    ),
    DegradeReason.VOICE_AS_AUDIO: (
        ("voice note", "voice notes"),
        ("sent as audio",) * 2,
        "degrade.voice_as_audio",
    ),
    DegradeReason.IMAGE_AS_DOCUMENT: (
        ("image", "images"),
        ("sent as a file", "sent as files"),
        "degrade.images_as_files",
    ),
    DegradeReason.CAPTION_AS_TEXT: (
        ("caption", "captions"),
        ("sent as text",) * 2,
        "degrade.captions_as_text",
    ),
}


def _report(events: Sequence[_Event]) -> DegradedDelivery | None:
    """Aggregate events by kind, in order of first occurrence."""
    totals: dict[tuple[object, ...], tuple[_Event, int]] = {}
    for event in events:
        first, count = totals.get(event.key(), (event, 0))
        totals[event.key()] = (first, count + event.count)
    if not totals:
        return None
    dropped = tuple(event.describe(count) for event, count in totals.values())
    reasons = tuple(event.reason for event, _ in totals.values())
    items = tuple(item for event, count in totals.values() for item in event.items(count))
    return DegradedDelivery(dropped, reasons, f"(Note: {'; '.join(dropped)}.)", items)


@dataclass
class _Adapter:
    limits: PresentationLimits
    store: CallbackStore | None
    events: list[_Event] = field(default_factory=list)
    widgets: int = 0

    def label(self, text: str) -> str:
        cap = self.limits.max_label_chars
        if cap is None or len(text) <= cap:
            return text
        self.events.append(
            _Event(DegradeReason.LABEL_SHORTENED, _LABEL, _SHORTENED, note=_N_LABELS)
        )
        return text[: cap - 1].rstrip() + "…"

    def counted(self, blocks: list[Block]) -> list[Block]:
        """Widgets past `max_widgets` in this message become text (reported)."""
        cap = self.limits.max_widgets
        out: list[Block] = []
        for block in blocks:
            if isinstance(block, Buttons | Select) and cap is not None:
                if self.widgets >= cap:
                    self.events.append(
                        _Event(DegradeReason.WIDGETS_AS_TEXT, _MENU, _AS_TEXT, note=_N_MENUS)
                    )
                    block = self.text(block_to_markdown(block))
                else:
                    self.widgets += 1
            out.append(block)
        return out

    def text(self, text: str) -> Text:
        """A generated text block, markdown only where the channel renders it."""
        return Text(text, markdown=self.limits.supports_markdown)

    def callback(self, value: str, noun: tuple[str, str], note: str) -> str:
        cap = self.limits.callback_data_max_bytes
        if cap is None or len(value.encode("utf-8", "surrogatepass")) <= cap:
            return value
        if self.store is not None:
            ref = REF_PREFIX + self.store.put(value)
            if len(ref.encode("utf-8", "surrogatepass")) <= cap:
                return ref
        self.events.append(
            _Event(DegradeReason.CALLBACK_DATA_TOO_LONG, noun, _SHORTENED, note=note)
        )
        return callback_hash(value)

    def fit_buttons(
        self, buttons: tuple[Button, ...], reason: DegradeReason, noun: tuple[str, str], note: str
    ) -> tuple[Button, ...]:
        cap = self.limits.max_buttons
        if len(buttons) > cap:
            self.events.append(_Event(reason, noun, _DROPPED, len(buttons) - cap, note=note))
            buttons = buttons[:cap]
        return tuple(
            replace(
                b,
                label=self.label(b.label),
                value=None
                if b.value is None
                else self.callback(b.value, _BUTTON_VALUE, _N_BUTTON_VALUES),
            )
            for b in buttons
        )

    def text_block(self, block: Text) -> list[Block]:
        if self.limits.supports_markdown or not block.markdown:
            return [block]
        plain = markdown_to_plain(block.text)
        if plain != block.text:
            detail = "formatting shown as plain text"
            fixed = (NoteItem(_N_FORMATTING),)
            self.events.append(_Event(DegradeReason.MARKDOWN_AS_PLAIN, detail=detail, fixed=fixed))
        return [Text(plain, markdown=False)]

    def buttons(self, block: Buttons) -> list[Block]:
        if not block.buttons:
            return []
        if not self.limits.supports_buttons:
            count = len(block.buttons)
            self.events.append(
                _Event(
                    DegradeReason.BUTTONS_UNSUPPORTED, _BUTTON, _AS_TEXT, count, note=_N_BTN_TEXT
                )
            )
            return [self.text(choices_to_text((b.label, b.url) for b in block.buttons))]
        links = tuple(b for b in block.buttons if b.url is not None)
        if links and not self.limits.link_buttons:
            return self.links_as_text(block, links)
        limits = self.limits
        overflow = len(block.buttons) > limits.max_buttons
        if overflow and limits.buttons_overflow_to_select and limits.supports_select:
            count = len(block.buttons)
            self.events.append(
                _Event(DegradeReason.BUTTONS_AS_SELECT, _BUTTON, _AS_LIST, count, note=_N_AS_LIST)
            )
            options = tuple(SelectOption(b.label, b.value or b.label) for b in block.buttons)
            return self.select(Select(options))
        kept = self.fit_buttons(
            block.buttons, DegradeReason.BUTTONS_TRUNCATED, _BUTTON, _N_BUTTONS_DROPPED
        )
        return [block if kept == block.buttons else Buttons(kept)]

    def links_as_text(self, block: Buttons, links: tuple[Button, ...]) -> list[Block]:
        """Link buttons the channel cannot show become text; the other buttons stay."""
        self.events.append(
            _Event(
                DegradeReason.LINK_BUTTONS_AS_TEXT,
                _LINK_BUTTON,
                _AS_TEXT,
                len(links),
                note=_N_LINKS,
            )
        )
        rest = tuple(b for b in block.buttons if b.url is None)
        as_text = self.text(choices_to_text((b.label, b.url) for b in links))
        return [as_text, *(self.buttons(Buttons(rest)) if rest else [])]

    def select(self, block: Select) -> list[Block]:
        options = block.options
        heading = block.placeholder if block.placeholder != DEFAULT_PLACEHOLDER else ""
        if not options:  # nothing to choose: keep only a custom prompt
            return [self.text(heading)] if heading.strip() else []
        if self.limits.supports_select:
            options = self.distinct_values(options)
            cap = self.limits.max_options
            if len(options) > cap:
                event = _Event(
                    DegradeReason.OPTIONS_TRUNCATED,
                    _OPTION,
                    _DROPPED,
                    len(options) - cap,
                    note=_N_OPTIONS_DROPPED,
                )
                self.events.append(event)
                options = options[:cap]
            options = tuple(
                SelectOption(
                    self.label(o.label), self.callback(o.value, _OPTION_VALUE, _N_OPTION_VALUES)
                )
                for o in options
            )
            placeholder = self.label(block.placeholder)
            if (options, placeholder) == (block.options, block.placeholder):
                return [block]
            return [replace(block, options=options, placeholder=placeholder)]
        if self.limits.supports_buttons:
            verb = ("rendered as buttons", "rendered as buttons")
            self.events.append(
                _Event(DegradeReason.SELECT_UNSUPPORTED, _SELECT, verb, note=_N_SELECT_BUTTONS)
            )
            as_buttons = tuple(Button(o.label, o.value) for o in options)
            kept = self.fit_buttons(
                as_buttons, DegradeReason.OPTIONS_TRUNCATED, _OPTION, _N_OPTIONS_DROPPED
            )
            return [*([self.text(heading)] if heading.strip() else []), Buttons(kept)]
        self.events.append(
            _Event(DegradeReason.SELECT_UNSUPPORTED, _SELECT, _AS_TEXT, note=_N_SELECT_TEXT)
        )
        return [self.text(choices_to_text(((o.label, None) for o in options), heading))]

    def distinct_values(self, options: tuple[SelectOption, ...]) -> tuple[SelectOption, ...]:
        """The first option of each value: a native select refuses repeated values (Discord
        rejects the message) and could not tell the two choices apart anyway."""
        first: dict[str, SelectOption] = {}
        for option in options:
            first.setdefault(option.value, option)
        kept = tuple(first.values())
        if len(kept) < len(options):
            count = len(options) - len(kept)
            self.events.append(
                _Event(
                    DegradeReason.OPTIONS_DUPLICATED, _OPTION, _REPEATED, count, note=_N_REPEATED
                )
            )
        return kept

    def table(self, block: Table) -> list[Block]:
        width, height = table_width(block), len(block.rows)
        if width == 0:
            return []
        cols = min(width, self.limits.max_table_cols)
        rows = min(height, self.limits.max_table_rows)
        if (cols, rows) != (width, height):
            parts = [f"{rows} of {height} rows"] if rows < height else []
            parts += [f"{cols} of {width} columns"] if cols < width else []
            detail = f"table truncated to {' and '.join(parts)}"
            fixed: tuple[NoteItem, ...] = ()
            fixed += (NoteItem(_N_ROWS, height, {"kept": rows}),) if rows < height else ()
            fixed += (NoteItem(_N_COLUMNS, width, {"kept": cols}),) if cols < width else ()
            event = _Event(DegradeReason.TABLE_TRUNCATED, detail=detail, fixed=fixed)
            self.events.append(event)
            block = Table(block.columns[:cols], tuple(r[:cols] for r in block.rows[:rows]))
            if table_width(block) == 0:  # the rows kept are empty: nothing left to show
                return []
        if self.limits.supports_tables:
            return [block]
        self.events.append(
            _Event(DegradeReason.TABLE_AS_TEXT, ("table", "tables"), _AS_TEXT, note=_N_TABLES)
        )
        return [self.text(table_to_markdown(block))]

    def file(self, block: File) -> list[Block]:
        fit = fit_file(block, self.limits.files)
        for reason in fit.reasons:
            noun, verb, note = _FILE_VERBS[reason]
            self.events.append(_Event(reason, noun, verb, note=note))
        text = [Text(fit.text, markdown=False)] if fit.text else []
        return [*text, *([fit.file] if fit.file is not None else [])]

    def block(self, block: Block) -> list[Block]:
        """The replacement blocks for one input block."""
        match block:
            case Text():
                return self.text_block(block)
            case Buttons():
                return self.counted(self.buttons(block))
            case Select():
                return self.counted(self.select(block))
            case Table():
                return self.table(block)
            case Chart() if not self.limits.supports_charts:
                self.events.append(
                    _Event(
                        DegradeReason.CHART_AS_TEXT, ("chart", "charts"), _AS_TEXT, note=_N_CHARTS
                    )
                )
                return [self.text(chart_to_text(block))]
            case File():
                return self.file(block)
            case Image() if not self.limits.supports_images:
                verb = ("sent as a link", "sent as links")
                self.events.append(
                    _Event(DegradeReason.IMAGE_AS_LINK, ("image", "images"), verb, note=_N_IMAGES)
                )
                return [self.text(image_to_text(block))]
        return [block]


def adapt(
    message: OutboundMessage,
    limits: PresentationLimits,
    *,
    callback_store: CallbackStore | None = None,
) -> tuple[OutboundMessage, DegradedDelivery | None]:
    """Fit `message` to `limits`; return the adapted message and what degraded (or None).

    A message that needs no change is returned as the same object. Callback values over
    `callback_data_max_bytes` are kept losslessly as "ref:<ref>" via `callback_store`, else
    replaced by a reported "h:<hash>".
    """
    if _fits_as_is(message, limits):
        return message, None
    adapter = _Adapter(limits, callback_store)
    blocks: list[Block] = []
    changed = False
    for block in message.blocks:
        new = adapter.block(block)
        changed = changed or len(new) != 1 or new[0] is not block
        blocks.extend(new)
    adapted = OutboundMessage(tuple(blocks)) if changed else message
    return adapted, _report(adapter.events)


def _fits_as_is(message: OutboundMessage, limits: PresentationLimits) -> bool:
    """Only text the channel shows as written (most replies): nothing to adapt or report."""
    return all(
        type(block) is Text and (limits.supports_markdown or not block.markdown)
        for block in message.blocks
    )


def with_note(
    message: OutboundMessage,
    report: DegradedDelivery | None,
    describe: Callable[[DegradedDelivery], str] | None = None,
) -> OutboundMessage:
    """Append the report's note as a Context block so the degradation is visible; `describe`
    words it for the reader (their language), else the English `note` is used."""
    if report is None:
        return message
    note = describe(report) if describe is not None else report.note
    return OutboundMessage((*message.blocks, Context(note)))
