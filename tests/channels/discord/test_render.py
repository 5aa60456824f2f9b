"""Rendering for Discord: markdown dialect, 2,000-character chunks, line limit, embeds, components."""

from __future__ import annotations

import pytest

from chatgate.channels.discord import LIMITS
from chatgate.channels.discord.ids import choice_of
from chatgate.channels.discord.markdown import markdown_to_discord
from chatgate.channels.discord.render import (
    BUTTONS_ONLY_TEXT,
    MAX_DESCRIPTION,
    MAX_TEXT,
    ButtonSpec,
    SelectSpec,
    render,
    split_lines,
    table_embed,
)
from chatgate.model.outbound import (
    Button,
    Buttons,
    Chart,
    Context,
    Image,
    OutboundMessage,
    Select,
    SelectOption,
    Series,
    Table,
    Text,
)
from chatgate.presentation.chunking import utf16_len
from chatgate.presentation.degrade import adapt, with_note

ZW = "\u200b"
MARKDOWN = [
    ("**bold** and *it* and _it_ and ~~gone~~", "**bold** and *it* and *it* and ~~gone~~"),
    ("__strong__", "**strong**"),  # underline in Discord: our dialect means bold
    ("snake_case and 2 * 3 | 4 ~ 5", "snake\\_case and 2 \\* 3 \\| 4 \\~ 5"),
    ("see https://x.test/a_b_(c)*", "see https://x.test/a_b_(c)*"),
    ("[docs](https://x.test/a_(b)) ok", "[docs](https://x.test/a_%28b%29) ok"),
    ("[run](javascript:alert(1))", "run (javascript:alert(1))"),
    ("**a *b* c**", "**a** ***b*** **c**"),
    ("**a*b***", f"**a**{ZW}***b***"),
    ("`a*b` and ``x`y``", "`a*b` and `` x`y ``"),
    ("# Title\n#### Deep", "### Title\n### Deep"),
    ("> # quoted", "> **quoted**"),
    ("- item\n1. two\n> quote", "- item\n1. two\n> quote"),
    ("-# not small", "\\-# not small"),
    ("---", "———"),
    ("```py\nx = '```'\n```", f"```py\nx = '``{ZW}`'\n```"),
    ("~~~\nx = ``````\n~~~", f"```\nx = ``{ZW}`{ZW}`{ZW}`{ZW}`\n```"),  # no ``` survives
    ("~~~\n**raw** <b>\n~~~", "```\n**raw** <b>\n```"),
    ("```\nunclosed", "```\nunclosed\n```"),
    ("<@123> hi @everyone", "<@123> hi @everyone"),  # allowed_mentions keeps these from pinging
]


@pytest.mark.parametrize(("md", "expected"), MARKDOWN)
def test_markdown_becomes_discord_markdown(md: str, expected: str) -> None:
    assert markdown_to_discord(md) == expected


def texts(message: OutboundMessage, **options: int) -> list[str]:
    return [r.text for r in render(message, **options)]


def test_plain_reply_is_one_message_that_quotes_the_trigger() -> None:
    [only] = render(OutboundMessage.from_text("hi **you**"))
    assert (only.text, only.native["reply"], only.native["rows"], only.native["embeds"]) == (
        "hi **you**",
        True,
        (),
        (),
    )


def test_5k_answer_is_chunked_under_2000_with_every_code_block_balanced() -> None:
    code = "\n".join(f"    print('line {i} 🚀 a*b_c')" for i in range(90))
    prose = " ".join(f"Sentence {i} with some words 😀." for i in range(60))
    answer = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert len(answer) >= 5000
    chunks = render(OutboundMessage.from_text(answer))
    assert len(chunks) >= 3
    assert [c.native["reply"] for c in chunks] == [True] + [False] * (len(chunks) - 1)
    seen = ""
    for chunk in chunks:
        assert utf16_len(chunk.text) <= MAX_TEXT
        assert chunk.text.count("```") % 2 == 0
        for block in chunk.text.split("```")[1::2]:
            seen += block.removeprefix("python\n")
    for i in range(90):
        assert f"print('line {i} 🚀 a*b_c')" in seen  # code is never escaped


def test_soft_line_limit_splits_text_but_never_a_code_block() -> None:
    lines = "\n".join(f"line {i}" for i in range(12))
    code = "```\n" + "\n".join(f"c{i}" for i in range(10)) + "\n```"
    chunks = texts(OutboundMessage.from_text(f"{lines}\n{code}\nafter"), max_lines=5)
    assert chunks[0] == "\n".join(f"line {i}" for i in range(5))
    assert any(code in c for c in chunks)  # the block is kept whole, past the soft limit
    assert chunks[-1].endswith("after")
    assert split_lines("a\nb", 0) == ["a\nb"]


def test_buttons_get_unique_prefixed_custom_ids_on_the_last_message() -> None:
    message = OutboundMessage(
        (
            Text("pick"),
            Buttons(
                (
                    Button("Yes", "same"),
                    Button("Also yes", "same", style="primary"),
                    Button("Docs", url="https://x.test"),
                    Button("No", "no", style="danger"),
                )
            ),
        )
    )
    [only] = render(message)
    [row] = only.native["rows"]
    assert row == (
        ButtonSpec("Yes", "secondary", custom_id="b0:same"),
        ButtonSpec("Also yes", "primary", custom_id="b1:same"),
        ButtonSpec("Docs", "link", url="https://x.test"),
        ButtonSpec("No", "danger", custom_id="b3:no"),
    )
    assert [choice_of(b.custom_id or "") for b in row if b.custom_id] == ["same", "same", "no"]


def test_buttons_only_get_a_prompt_and_rows_of_five() -> None:
    buttons = Buttons(tuple(Button(f"B{i}", f"v{i}") for i in range(12)))
    [only] = render(OutboundMessage((buttons,)))
    assert only.text == BUTTONS_ONLY_TEXT
    assert [len(r) for r in only.native["rows"]] == [5, 5, 2]


def test_select_is_one_row_and_its_choice_comes_from_values() -> None:
    select = Select((SelectOption("Red", "r"), SelectOption("Blue", "b")), "Colour?", "colour")
    [only] = render(OutboundMessage((Text("choose"), select)))
    [row] = only.native["rows"]
    assert row == SelectSpec("s0:colour", "Colour?", (("Red", "r"), ("Blue", "b")))
    assert choice_of(row.custom_id, ["b"]) == "b"
    assert choice_of(row.custom_id, []) is None


def test_components_beyond_five_rows_are_counted_in_a_visible_note() -> None:
    many = [Buttons(tuple(Button(f"{r}{i}", f"{r}{i}") for i in range(5))) for r in "abcdef"]
    [only] = render(OutboundMessage((Text("grid"), *many)))
    assert len(only.native["rows"]) == 5
    assert only.text.endswith("-# (Note: 5 more options not shown.)")


def test_long_values_are_shortened_to_fit_custom_id() -> None:
    stored: list[str] = []

    def shorten(value: str) -> str:
        stored.append(value)
        return "ref:abc"

    label = "é" * 60  # 60 characters, 120 bytes: a label standing in for a value
    [only] = render(OutboundMessage((Buttons((Button(label),)),)), shorten=shorten)
    [[button]] = only.native["rows"]
    assert button.custom_id == "b0:ref:abc" and stored == [label]


def test_table_becomes_an_embed_after_the_text_before_it() -> None:
    table = Table(("name", "qty"), (("apple", "3"), ("kiwi", "12")))
    parts = render(OutboundMessage((Text("stock:"), table, Text("done"))))
    assert [p.text for p in parts] == ["stock:", "done"]
    [embed] = parts[0].native["embeds"]
    assert embed.description == "```\nname  | qty\n------+----\napple | 3\nkiwi  | 12\n```"


def test_a_huge_table_keeps_what_fits_and_says_how_many_rows_are_missing() -> None:
    rows = tuple((f"row {i}", "x" * 30) for i in range(300))
    embed = table_embed(Table(("a", "b"), rows))
    assert len(embed.description) <= MAX_DESCRIPTION
    assert embed.footer.endswith("more rows not shown")


def test_through_adapt_tables_stay_embeds_and_charts_degrade_with_the_note() -> None:
    chart = Chart("bar", (Series("s", (1.0, 2.0)),))
    message = OutboundMessage((Table(("a",), (("1",),)), chart))
    adapted, report = adapt(message, LIMITS)
    parts = render(with_note(adapted, report))
    assert report is not None and "chart rendered as text" in report.note
    assert parts[0].native["embeds"] and parts[-1].text.endswith(
        "-# (Note: 1 chart rendered as text.)"
    )


def test_images_are_embeds_and_context_is_subtext() -> None:
    parts = render(OutboundMessage((Image("https://x.test/a.png", "a cat"), Context("small"))))
    assert parts[0].text == "" and parts[0].native["embeds"][0].image_url == "https://x.test/a.png"
    assert parts[1].text == "-# small"
