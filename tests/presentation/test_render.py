"""to_markdown: text-only rendering of adapted messages."""

from __future__ import annotations

from chatgate.channels.telegram import LIMITS as TELEGRAM
from chatgate.model.outbound import (
    Button,
    Buttons,
    Chart,
    Context,
    Divider,
    Image,
    OutboundMessage,
    Select,
    SelectOption,
    Series,
    Table,
    Text,
)
from chatgate.presentation.degrade import adapt, with_note
from chatgate.presentation.markdown import markdown_to_html
from chatgate.presentation.render import to_markdown


def test_blocks_joined_by_blank_lines() -> None:
    message = OutboundMessage(
        (Text("Hello **there**"), Divider(), Context("small print"), Text("bye"))
    )
    assert to_markdown(message) == "Hello **there**\n\n———\n\n_small print_\n\nbye"


def test_empty_blocks_are_skipped() -> None:
    message = OutboundMessage((Text(""), Text("a"), Buttons(()), Context("  "), Text("b")))
    assert to_markdown(message) == "a\n\nb"
    assert to_markdown(OutboundMessage(())) == ""


def test_multiline_context_is_italic_per_line() -> None:
    assert to_markdown(OutboundMessage((Context("one\n\n two "),))) == "_one_\n\n_two_"


def test_widgets_of_a_native_channel_render_as_text_for_transcripts() -> None:
    message = OutboundMessage(
        (
            Buttons((Button("Yes", "y"), Button("Docs", url="https://d"))),
            Select((SelectOption("Red", "r"),), "Pick"),
            Select((SelectOption("Blue", "b"),)),
            Table(("a",), (("1",),)),
            Chart("bar", (Series("s", (1.0,)),)),
            Image("https://i", "pic"),
        )
    )
    assert to_markdown(message) == (
        "1. Yes\n2. Docs (https://d)\n\n"
        "Pick\n1. Red\n\n"
        "1. Blue\n\n"
        "| a |\n| --- |\n| 1 |\n\n"
        "Bar chart\ns: 1\n\n"
        "pic: https://i"
    )


def test_degradation_note_renders_as_italic_telegram_html() -> None:
    message = OutboundMessage((Text("Data:"), Table(("k", "v"), (("a", "1"),))))
    adapted, report = adapt(message, TELEGRAM)
    text = to_markdown(with_note(adapted, report))
    assert text.endswith("_(Note: 1 table rendered as text.)_")
    html = markdown_to_html(text)
    assert html.endswith("<i>(Note: 1 table rendered as text.)</i>")
    assert "| k | v |" in html
