"""adapt(): one table row per degradation rule, plus report/note formatting and with_note."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from chatgate.channels.telegram import LIMITS as TELEGRAM
from chatgate.model.outbound import (
    Block,
    Button,
    Buttons,
    Chart,
    Context,
    Divider,
    File,
    Image,
    OutboundMessage,
    Select,
    SelectOption,
    Series,
    Table,
    Text,
)
from chatgate.model.reasons import DegradeReason as R
from chatgate.presentation.degrade import (
    DegradedDelivery,
    adapt,
    callback_hash,
    with_note,
)
from chatgate.presentation.file_rules import MB, FileLimits
from chatgate.presentation.limits import PLAIN, PresentationLimits

L = PresentationLimits
NO_MD = L(supports_markdown=False)
NO_BUTTONS = L(supports_buttons=False)
CAP64 = L(callback_data_max_bytes=64)


class DictStore:
    """A CallbackStore keeping payloads in memory, handing out numbered references."""

    def __init__(self, prefix: str = "") -> None:
        self.values: dict[str, str] = {}
        self.prefix = prefix

    def put(self, value: str) -> str:
        ref = f"{self.prefix}{len(self.values) + 1}"
        self.values[ref] = value
        return ref


def opts(n: int) -> tuple[SelectOption, ...]:
    return tuple(SelectOption(f"o{i}", f"v{i}") for i in range(n))


def buttons(n: int) -> tuple[Button, ...]:
    return tuple(Button(f"b{i}", f"v{i}") for i in range(n))


@dataclass(frozen=True)
class Case:
    name: str
    blocks: tuple[Block, ...]
    limits: PresentationLimits
    expected: tuple[Block, ...]
    reasons: tuple[R, ...] = ()
    dropped: tuple[str, ...] | None = None


LONG = "x" * 65
TABLE = Table(("name", "qty"), (("apple", "3"), ("pe|ar",)))
TABLE_MD = "| name | qty |\n| --- | --- |\n| apple | 3 |\n| pe\\|ar |  |"
SELECT = Select((SelectOption("Red", "r"), SelectOption("Blue", "b")), "Pick a colour")

FILES = L(
    files=FileLimits(
        10 * MB, 20, max_photo_bytes=MB, kinds=frozenset({"image", "document", "audio"})
    )
)


def file(kind: str, size: int = 100, caption: str = "") -> File:
    return File("a.bin", "application/octet-stream", kind, caption, size, "0" * 32)  # type: ignore[arg-type]


CASES = [
    Case("markdown kept", (Text("**hi**"),), L(), (Text("**hi**"),)),
    Case("a file that fits is kept", (file("image"),), FILES, (file("image"),)),
    Case(
        "a channel without files shows a notice",
        (file("image"),),
        L(),
        (
            Text(
                "📎 a.bin (100 bytes) could not be attached: this chat cannot receive files.", False
            ),
        ),
        (R.FILE_UNSUPPORTED,),
        ("1 file not attached (this chat takes no files)",),
    ),
    Case(
        "a file over the limit becomes a notice naming it",
        (file("document", 11 * MB),),
        FILES,
        (Text("📎 a.bin (11 MB) is over this chat's 10 MB file limit.", False),),
        (R.FILE_TOO_LARGE,),
        ("1 file over the size limit not attached",),
    ),
    Case(
        "voice without voice notes goes as audio, video as a document",
        (file("voice"), file("video")),
        FILES,
        (file("audio"), file("document")),
        (R.VOICE_AS_AUDIO, R.FILE_AS_DOCUMENT),
        ("1 voice note sent as audio", "1 file sent as a document"),
    ),
    Case(
        "a photo over the photo limit goes as a file; a long caption as text",
        (file("image", 2 * MB, "c" * 21),),
        FILES,
        (Text("c" * 21, False), file("document", 2 * MB)),
        (R.IMAGE_AS_DOCUMENT, R.CAPTION_AS_TEXT),
        ("1 image sent as a file", "1 caption sent as text"),
    ),
    Case(
        "markdown stripped",
        (Text("**hi** _there_ [d](https://d)"),),
        NO_MD,
        (Text("hi there d (https://d)", markdown=False),),
        (R.MARKDOWN_AS_PLAIN,),
        ("formatting shown as plain text",),
    ),
    Case(
        "markdown without markup is not reported",
        (Text("snake_case and 2 * 3"),),
        NO_MD,
        (Text("snake_case and 2 * 3", markdown=False),),
    ),
    Case("plain text untouched", (Text("*x*", markdown=False),), NO_MD, (Text("*x*", False),)),
    Case(
        "buttons unsupported become a numbered list",
        (Buttons((Button("Yes", "y"), Button("Docs", url="https://d.example"))),),
        NO_BUTTONS,
        (Text("1. Yes\n2. Docs (https://d.example)"),),
        (R.BUTTONS_UNSUPPORTED,),
        ("2 buttons rendered as text",),
    ),
    Case(
        "buttons over the cap are dropped and counted",
        (Buttons(buttons(13)),),
        L(max_buttons=10),
        (Buttons(buttons(10)),),
        (R.BUTTONS_TRUNCATED,),
        ("3 buttons dropped",),
    ),
    Case(
        "long callback without a store is hashed",
        (Buttons((Button("A", LONG), Button("B", "short"))),),
        CAP64,
        (Buttons((Button("A", callback_hash(LONG)), Button("B", "short"))),),
        (R.CALLBACK_DATA_TOO_LONG,),
        ("1 button value shortened",),
    ),
    Case(
        "callback cap counts UTF-8 bytes",
        (Buttons((Button("A", "é" * 32), Button("B", "é" * 33))),),
        CAP64,
        (Buttons((Button("A", "é" * 32), Button("B", callback_hash("é" * 33)))),),
        (R.CALLBACK_DATA_TOO_LONG,),
    ),
    Case(
        "select over max_options",
        (Select(opts(30)),),
        L(supports_select=True, max_options=25),
        (Select(opts(25)),),
        (R.OPTIONS_TRUNCATED,),
        ("5 options dropped",),
    ),
    Case(
        "repeated option values keep the first option of each",
        (Select((SelectOption("A", "x"), SelectOption("B", "y"), SelectOption("C", "x"))),),
        L(supports_select=True),
        (Select((SelectOption("A", "x"), SelectOption("B", "y"))),),
        (R.OPTIONS_DUPLICATED,),
        ("1 option with a repeated value dropped",),
    ),
    Case(
        "repeated values are dropped before the cap, so they take no slot",
        (Select((SelectOption("A", "x"), SelectOption("A again", "x"), *opts(3))),),
        L(supports_select=True, max_options=3),
        (Select((SelectOption("A", "x"), *opts(2))),),
        (R.OPTIONS_DUPLICATED, R.OPTIONS_TRUNCATED),
        ("1 option with a repeated value dropped", "1 option dropped"),
    ),
    Case(
        "a select shown as buttons keeps repeated values (buttons may share one)",
        (Select((SelectOption("A", "x"), SelectOption("B", "x"))),),
        L(),
        (Buttons((Button("A", "x"), Button("B", "x"))),),
        (R.SELECT_UNSUPPORTED,),
    ),
    Case(
        "long option value is hashed",
        (Select((SelectOption("A", LONG),)),),
        L(supports_select=True, callback_data_max_bytes=64),
        (Select((SelectOption("A", callback_hash(LONG)),)),),
        (R.CALLBACK_DATA_TOO_LONG,),
        ("1 option value shortened",),
    ),
    Case(
        "select unsupported becomes buttons under its prompt",
        (SELECT,),
        L(),
        (Text("Pick a colour"), Buttons((Button("Red", "r"), Button("Blue", "b")))),
        (R.SELECT_UNSUPPORTED,),
        ("1 select menu rendered as buttons",),
    ),
    Case(
        "default placeholder is not repeated",
        (Select(opts(2)),),
        L(),
        (Buttons((Button("o0", "v0"), Button("o1", "v1"))),),
        (R.SELECT_UNSUPPORTED,),
    ),
    Case(
        "select as buttons respects the button cap",
        (Select(opts(12)),),
        L(max_buttons=10),
        (Buttons(tuple(Button(o.label, o.value) for o in opts(10))),),
        (R.SELECT_UNSUPPORTED, R.OPTIONS_TRUNCATED),
        ("1 select menu rendered as buttons", "2 options dropped"),
    ),
    Case(
        "select without select or buttons becomes a list",
        (SELECT,),
        NO_BUTTONS,
        (Text("Pick a colour\n1. Red\n2. Blue"),),
        (R.SELECT_UNSUPPORTED,),
        ("1 select menu rendered as text",),
    ),
    Case(
        "table as markdown text",
        (TABLE,),
        L(),
        (Text(TABLE_MD),),
        (R.TABLE_AS_TEXT,),
        ("1 table rendered as text",),
    ),
    Case(
        "table text on a plain channel is not markdown",
        (TABLE,),
        NO_MD,
        (Text(TABLE_MD, markdown=False),),
        (R.TABLE_AS_TEXT,),
    ),
    Case(
        "wide rows widen the header instead of losing cells",
        (Table(("a",), (("1", "2"),)),),
        L(),
        (Text("| a |  |\n| --- | --- |\n| 1 | 2 |"),),
        (R.TABLE_AS_TEXT,),
    ),
    Case(
        "multi-line cells stay on one row",
        (Table(("a",), (("line1\nline2",),)),),
        L(),
        (Text("| a |\n| --- |\n| line1 line2 |"),),
        (R.TABLE_AS_TEXT,),
    ),
    Case(
        "table clamped and rendered as text",
        (Table(("a", "b", "c"), (("1", "2", "3"),) * 4),),
        L(max_table_rows=2, max_table_cols=2),
        (Text("| a | b |\n| --- | --- |\n| 1 | 2 |\n| 1 | 2 |"),),
        (R.TABLE_TRUNCATED, R.TABLE_AS_TEXT),
        ("table truncated to 2 of 4 rows and 2 of 3 columns", "1 table rendered as text"),
    ),
    Case(
        "native table clamped by rows only",
        (Table(("a",), (("1",), ("2",), ("3",))),),
        L(supports_tables=True, max_table_rows=2),
        (Table(("a",), (("1",), ("2",))),),
        (R.TABLE_TRUNCATED,),
        ("table truncated to 2 of 3 rows",),
    ),
    Case(
        "table whose kept rows are empty is dropped, reported",
        (Table((), ((), ("w",))),),
        L(supports_tables=True, max_table_rows=1, max_table_cols=1),
        (),
        (R.TABLE_TRUNCATED,),
        ("table truncated to 1 of 2 rows",),
    ),
    Case("native table kept", (TABLE,), L(supports_tables=True), (TABLE,)),
    Case(
        "chart with caption as text",
        (Chart("bar", (Series("sales", (1.0, 2.5)), Series("cost", ())), "Q1"),),
        L(),
        (Text("Q1 (bar chart)\nsales: 1, 2.5\ncost:"),),
        (R.CHART_AS_TEXT,),
        ("1 chart rendered as text",),
    ),
    Case(
        "chart without caption as text",
        (Chart("line", (Series("t", (3.0,)),)),),
        L(),
        (Text("Line chart\nt: 3"),),
        (R.CHART_AS_TEXT,),
    ),
    Case("native chart kept", (Chart("pie", ()),), L(supports_charts=True), (Chart("pie", ()),)),
    Case(
        "image as link",
        (Image("https://i/a.png", "a cat"), Image("https://i/b.png")),
        L(supports_images=False),
        (Text("a cat: https://i/a.png"), Text("https://i/b.png")),
        (R.IMAGE_AS_LINK,),
        ("2 images sent as links",),
    ),
    Case("image kept", (Image("https://i"),), L(), (Image("https://i"),)),
    Case(
        "empty widgets vanish without a report",
        (Buttons(()), Select(()), Table((), ()), Divider(), Context("c")),
        NO_BUTTONS,
        (Divider(), Context("c")),
    ),
    Case(
        "long labels are clipped to the channel's cap",
        (Buttons((Button("a very long label indeed", "v"), Button("short", "s"))),),
        L(max_label_chars=10),
        (Buttons((Button("a very lo…", "v"), Button("short", "s"))),),
        (R.LABEL_SHORTENED,),
        ("1 label shortened",),
    ),
    Case(
        "select option labels and placeholder are clipped too",
        (Select((SelectOption("option number one", "1"),), "Pick one of these"),),
        L(supports_select=True, max_label_chars=8),
        (Select((SelectOption("option…", "1"),), "Pick on…"),),
        (R.LABEL_SHORTENED,),
        ("2 labels shortened",),
    ),
    Case(
        "buttons over the cap become a select where the channel prefers that",
        (Buttons(buttons(5)),),
        L(max_buttons=3, supports_select=True, buttons_overflow_to_select=True),
        (Select(tuple(SelectOption(f"b{i}", f"v{i}") for i in range(5))),),
        (R.BUTTONS_AS_SELECT,),
        ("5 buttons shown as a list",),
    ),
    Case(
        "buttons as a select still obey the option cap",
        (Buttons(buttons(12)),),
        L(max_buttons=3, supports_select=True, max_options=10, buttons_overflow_to_select=True),
        (Select(tuple(SelectOption(f"b{i}", f"v{i}") for i in range(10))),),
        (R.BUTTONS_AS_SELECT, R.OPTIONS_TRUNCATED),
        ("12 buttons shown as a list", "2 options dropped"),
    ),
    Case(
        "without a select, overflowing buttons are truncated as usual",
        (Buttons(buttons(5)),),
        L(max_buttons=3, buttons_overflow_to_select=True),
        (Buttons(buttons(3)),),
        (R.BUTTONS_TRUNCATED,),
    ),
    Case(
        "link buttons become text lines where the channel has none",
        (Buttons((Button("Docs", url="https://d"), Button("Yes", "y"))),),
        L(link_buttons=False),
        (Text("1. Docs (https://d)"), Buttons((Button("Yes", "y"),))),
        (R.LINK_BUTTONS_AS_TEXT,),
        ("1 link button rendered as text",),
    ),
    Case(
        "widgets past the per-message cap become text",
        (Buttons(buttons(2)), Select(opts(2), "Or pick"), Buttons(buttons(1))),
        L(supports_select=True, max_widgets=1),
        (Buttons(buttons(2)), Text("Or pick\n1. o0\n2. o1"), Text("1. b0")),
        (R.WIDGETS_AS_TEXT,),
        ("2 menus rendered as text",),
    ),
    Case(
        "events of one kind are aggregated in first-seen order",
        (TABLE, Buttons(buttons(12)), TABLE, Buttons(buttons(11))),
        L(),
        (Text(TABLE_MD), Buttons(buttons(10)), Text(TABLE_MD), Buttons(buttons(10))),
        (R.TABLE_AS_TEXT, R.BUTTONS_TRUNCATED),
        ("2 tables rendered as text", "3 buttons dropped"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_adapt(case: Case) -> None:
    adapted, report = adapt(OutboundMessage(case.blocks), case.limits)
    assert adapted.blocks == case.expected
    if not case.reasons:
        assert report is None
        return
    assert report is not None
    assert report.reasons == case.reasons
    if case.dropped is not None:
        assert report.dropped == case.dropped
    assert report.note == f"(Note: {'; '.join(report.dropped)}.)"


def test_every_degrade_reason_has_a_case() -> None:
    covered = {reason for case in CASES for reason in case.reasons}
    assert covered == set(R) - {R.FILE_MISSING}  # found at send time, not by adapt


def test_generated_text_follows_markdown_support() -> None:
    for limits, markdown in ((L(), True), (NO_MD, False)):
        adapted, _ = adapt(OutboundMessage((TABLE,)), limits)
        block = adapted.blocks[0]
        assert isinstance(block, Text) and block.markdown is markdown


def test_unchanged_message_is_returned_as_is() -> None:
    message = OutboundMessage((Text("hi"), Buttons(buttons(3)), Image("https://i"), Divider()))
    adapted, report = adapt(message, TELEGRAM)
    assert adapted is message and report is None


def test_store_keeps_long_callbacks_losslessly() -> None:
    store = DictStore()
    message = OutboundMessage((Buttons((Button("A", LONG), Button("B", "ok"))),))
    adapted, report = adapt(message, CAP64, callback_store=store)
    assert report is None
    assert adapted.blocks == (Buttons((Button("A", "ref:1"), Button("B", "ok"))),)
    assert store.values == {"1": LONG}


def test_store_is_used_for_select_options_as_buttons() -> None:
    store = DictStore()
    select = Select((SelectOption("A", LONG),))
    adapted, report = adapt(OutboundMessage((select,)), CAP64, callback_store=store)
    assert report is not None and report.reasons == (R.SELECT_UNSUPPORTED,)
    assert adapted.blocks == (Buttons((Button("A", "ref:1"),)),)


def test_store_reference_too_long_falls_back_to_reported_hash() -> None:
    store = DictStore(prefix="r" * 70)
    message = OutboundMessage((Buttons((Button("A", LONG),)),))
    adapted, report = adapt(message, CAP64, callback_store=store)
    assert adapted.blocks == (Buttons((Button("A", callback_hash(LONG)),)),)
    assert report is not None and report.reasons == (R.CALLBACK_DATA_TOO_LONG,)


def test_callback_hash_is_short_and_stable() -> None:
    assert callback_hash(LONG) == callback_hash("x" * 65) != callback_hash("y" * 65)
    assert callback_hash(LONG).startswith("h:") and len(callback_hash(LONG)) == 18


def test_dropped_buttons_are_the_last_ones() -> None:
    adapted, _ = adapt(OutboundMessage((Buttons(buttons(5)),)), L(max_buttons=2))
    assert adapted.blocks == (Buttons(buttons(2)),)


def test_button_style_and_url_survive_callback_shortening() -> None:
    button = Button("Go", LONG, url="https://g", style="danger")
    adapted, _ = adapt(OutboundMessage((Buttons((button,)),)), CAP64)
    block = adapted.blocks[0]
    assert isinstance(block, Buttons)
    assert block.buttons[0] == Button("Go", callback_hash(LONG), "https://g", "danger")


def test_with_note_appends_context() -> None:
    message = OutboundMessage((TABLE,))
    adapted, report = adapt(message, L())
    noted = with_note(adapted, report)
    assert noted.blocks == (Text(TABLE_MD), Context("(Note: 1 table rendered as text.)"))
    assert with_note(message, None) is message


def test_report_requires_aligned_fields() -> None:
    with pytest.raises(ValueError, match="aligned"):
        DegradedDelivery(("a", "b"), (R.TABLE_AS_TEXT,), "n")


def test_telegram_degrades_select_and_table() -> None:
    message = OutboundMessage((Text("**Menu**"), SELECT, TABLE))
    adapted, report = adapt(message, TELEGRAM)
    assert adapted.blocks[0] == Text("**Menu**")
    assert isinstance(adapted.blocks[2], Buttons)
    assert report is not None
    assert report.note == "(Note: 1 select menu rendered as buttons; 1 table rendered as text.)"


def test_plain_platform_degrades_everything_to_text() -> None:
    message = OutboundMessage((Text("**b**"), Buttons(buttons(2)), Image("https://i", "pic")))
    adapted, report = adapt(message, PLAIN)
    assert all(isinstance(b, Text) and not b.markdown for b in adapted.blocks)
    assert report is not None
    assert set(report.reasons) == {R.MARKDOWN_AS_PLAIN, R.BUTTONS_UNSUPPORTED, R.IMAGE_AS_LINK}
