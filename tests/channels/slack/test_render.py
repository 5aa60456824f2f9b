"""Rendering for Slack: mrkdwn, 3,000-character chunks, Block Kit shapes, 50-block split."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chatgate.channels.slack.ids import choice_of
from chatgate.channels.slack.render import (
    BUTTONS_ONLY_TEXT,
    FORMAT,
    MAX_BLOCKS,
    MAX_TEXT,
    render,
    table_blocks,
)
from chatgate.model.outbound import (
    Block,
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
from tests.channels.slack.blockkit import blocks_of, check

ZW = "\u200b"
MRKDWN = [
    ("**bold** and __strong__", "*bold* and *strong*"),
    ("*it* and _it_", "_it_ and _it_"),
    ("~~gone~~", "~gone~"),
    ("use `a<b>` now", "use `a&lt;b&gt;` now"),
    ("```python\nif a < b:\n    x = '*y*'\n```", "```\nif a &lt; b:\n    x = '*y*'\n```"),
    ("````\n```\ninner\n```\n````", f"```\n``{ZW}`\ninner\n``{ZW}`\n```"),
    ("\\`\\`\\` not code", f"{ZW}``` not code"),
    ("[docs](https://x.test/a?b=1&c=2)", "<https://x.test/a?b=1&amp;c=2|docs>"),
    ("<https://x.test>", "<https://x.test>"),
    ("see https://x.test/a_b_c", "see https://x.test/a_b_c"),
    ("[x](javascript:alert(1))", "x (javascript:alert(1))"),
    ("a & b < c > d", "a &amp; b &lt; c &gt; d"),
    ("<!channel> <@U1>", "&lt;!channel&gt; &lt;@U1&gt;"),  # no mass pings from agent text
    ("- one\n* two\n1. three", "• one\n• two\n1. three"),
    ("# Title\n### Sub *x*", "*Title*\n*Sub* *_x_*"),
    ("> quoted **b**", "&gt; quoted *b*"),
]


@pytest.mark.parametrize(("md", "expected"), MRKDWN, ids=[m[0][:24] for m in MRKDWN])
def test_markdown_becomes_mrkdwn_text(md: str, expected: str) -> None:
    [only] = check(render(OutboundMessage.from_text(md)))
    assert (only.text, only.format, only.native) == (
        expected,
        FORMAT,
        {"blocks": (), "reply": True},
    )


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        ((Text("a *b*", markdown=False),), "a *b*"),
        ((Text("one"), Divider(), Context("small print")), "one\n\n———\n\n_small print_"),
        ((Chart("bar", (Series("s", (1.0, 2.5)),)),), "Bar chart\ns: 1, 2.5"),
        ((Text("x"), Buttons(()), Select(())), "x"),
    ],
)
def test_text_only_replies_are_plain_text(blocks: tuple[Block, ...], expected: str) -> None:
    [only] = check(render(OutboundMessage(blocks)))
    assert only.text == expected and only.native["blocks"] == ()


def test_empty_message_renders_nothing() -> None:
    assert render(OutboundMessage(())) == []
    assert render(OutboundMessage.from_text("  \n ")) == []


def test_10k_answer_with_code_is_chunked_under_3000_with_balanced_fences() -> None:
    code = "\n".join(f"    print('line {i} <tag> & a*b_c')" for i in range(150))
    prose = " ".join(
        f"Sentence {i} with **bold** and [a link](https://x.test/{i})." for i in range(80)
    )
    answer = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert len(answer) >= 10_000
    parts = check(render(OutboundMessage.from_text(answer)))
    assert len(parts) >= 4
    strip = re.compile(r"^```$|\s", re.MULTILINE)
    whole = "\n".join(p.text for p in parts)
    for i in range(150):
        assert f"print('line {i} &lt;tag&gt; &amp; a*b_c')" in whole
    for i in range(80):
        assert whole.count(f"<https://x.test/{i}|a link>") == 2  # no link is cut in two
    assert strip.sub("", whole) == strip.sub("", render_whole(answer))


def render_whole(md: str) -> str:
    [only] = render(OutboundMessage.from_text(md), limit=100_000)
    return only.text


def test_buttons_become_an_actions_block_with_ids_styles_urls_and_short_values() -> None:
    stored: dict[str, str] = {}

    def shorten(value: str) -> str:
        stored[f"ref:{len(stored)}"] = value
        return f"ref:{len(stored) - 1}"

    long = "v" * 2001
    buttons = Buttons(
        (
            Button("Yes", "yes", style="primary"),
            Button("No", "no", style="danger"),
            Button("Plain"),
            Button("Docs", url="https://x.test/docs"),
            Button("L" * 100, long),
        )
    )
    [section, actions] = blocks_of(OutboundMessage((Text("pick"), buttons)), shorten=shorten)
    assert section == {"type": "section", "text": {"type": "mrkdwn", "text": "pick"}}
    elements = actions["elements"]
    assert [e["action_id"] for e in elements] == ["b0", "b1", "b2", "b3", "b4"]
    assert [e.get("style") for e in elements] == ["primary", "danger", None, None, None]
    assert [e.get("value") for e in elements] == ["yes", "no", "Plain", None, "ref:0"]
    assert elements[3]["url"] == "https://x.test/docs"
    assert elements[4]["text"] == {"type": "plain_text", "text": "L" * 74 + "…", "emoji": True}
    assert stored == {"ref:0": long}


def test_buttons_only_get_a_prompt_as_fallback_text() -> None:
    [only] = check(render(OutboundMessage((Buttons((Button("A", "a"),)),))))
    assert only.text == BUTTONS_ONLY_TEXT and only.native["blocks"][0]["type"] == "actions"


def test_more_than_25_buttons_take_several_actions_blocks() -> None:
    buttons = Buttons(tuple(Button(f"B{i}", f"v{i}") for i in range(60)))
    blocks = blocks_of(OutboundMessage((buttons,)))
    assert [len(b["elements"]) for b in blocks] == [25, 25, 10]


@pytest.mark.parametrize(
    ("components", "actions", "note"),
    [
        (
            (
                Buttons(
                    (Button("a", url="tg://x"), Button("b", url="https://x.test/" + "p" * 3000))
                ),
            ),
            0,
            2,
        ),
        (tuple(Select((SelectOption("o", "o"),), action_id=f"s{i}") for i in range(55)), 49, 6),
        (tuple(Buttons((Button(f"{i}", f"{i}"),)) for i in range(51)), 49, 2),
    ],
)
def test_components_without_room_are_counted_in_a_note(
    components: tuple[Block, ...], actions: int, note: int
) -> None:
    parts = check(render(OutboundMessage((Text("pick"), *components))))
    last = parts[-1].native["blocks"]
    assert sum(b["type"] == "actions" for b in last) == actions
    [context] = [b for b in last if b["type"] == "context"]
    assert context["elements"][0]["text"] == f"(Note: {note} more options not shown.)"


def test_select_is_a_static_select_with_capped_options() -> None:
    options = (SelectOption("Red", "r"), SelectOption("x" * 90, "y" * 151), SelectOption("", ""))
    select = Select(
        options + tuple(SelectOption(f"o{i}", f"{i}") for i in range(110)), "", "colour"
    )
    blocks = blocks_of(OutboundMessage((select,)), shorten=lambda v: "ref:1")
    [note, actions] = blocks
    assert note["elements"][0]["text"] == "(Note: 13 more options not shown.)"
    [element] = actions["elements"]
    assert element["action_id"] == "s0:colour"
    assert element["placeholder"]["text"] == "Choose…"
    assert len(element["options"]) == 100
    assert [o["value"] for o in element["options"][:3]] == ["r", "ref:1", "…"]
    assert element["options"][1]["text"]["text"] == "x" * 74 + "…"


def test_table_is_a_monospace_grid_in_a_section() -> None:
    table = Table(("name", "qty"), (("apple", "3"), ("kiwi & co", "12", "extra")))
    [section] = blocks_of(OutboundMessage((Text("stock:"), table)))[1:]
    assert section["text"]["text"] == (
        "```\nname      | qty |\n----------+-----+------\n"
        "apple     | 3   |\nkiwi &amp; co | 12  | extra\n```"
    )


def test_a_huge_table_keeps_what_fits_and_says_how_many_rows_and_columns_are_missing() -> None:
    rows = tuple(tuple(f"r{i}c{j}" + "x" * 20 for j in range(14)) for i in range(300))
    [section, note] = table_blocks(Table(tuple(f"h{j}" for j in range(14)), rows))
    assert len(section["text"]["text"]) <= MAX_TEXT
    kept = section["text"]["text"].count("\nr")
    assert 0 < kept < 300
    assert (
        note["elements"][0]["text"] == f"{300 - kept} more rows not shown; 4 more columns not shown"
    )


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        (
            Image("https://x.test/cat.png", "a  cat"),
            {"type": "image", "image_url": "https://x.test/cat.png", "alt_text": "a cat"},
        ),
        (
            Image("https://x.test/cat.png"),
            {"type": "image", "image_url": "https://x.test/cat.png", "alt_text": "image"},
        ),
        (
            Image("ftp://x.test/cat.png", "cat"),
            {"type": "section", "text": {"type": "mrkdwn", "text": "cat: ftp://x.test/cat.png"}},
        ),
    ],
)
def test_images(image: Image, expected: dict[str, Any]) -> None:
    assert blocks_of(OutboundMessage((image,))) == [expected]


def test_divider_and_context_blocks_in_a_block_kit_message() -> None:
    message = OutboundMessage((Image("https://x.test/a.png", "a"), Divider(), Context("*small*")))
    assert blocks_of(message)[1:] == [
        {"type": "divider"},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "_small_"}]},
    ]


def test_a_long_context_takes_several_elements() -> None:
    text = "\n\n".join(f"paragraph {i} " + "word " * 500 for i in range(25))
    message = OutboundMessage((Image("https://x.test/a.png"), Context(text)))
    contexts = [b for b in blocks_of(message) if b["type"] == "context"]
    assert [len(c["elements"]) for c in contexts] == [10, 10, 5]


def test_more_than_50_blocks_split_into_messages_with_components_on_the_last() -> None:
    blocks: list[Block] = []
    for i in range(40):
        blocks += [Text(f"part {i}"), Divider()]
    blocks += [Image("https://x.test/a.png"), Buttons((Button("OK", "ok"),))]
    parts = check(render(OutboundMessage(tuple(blocks))))
    assert [len(p.native["blocks"]) for p in parts] == [MAX_BLOCKS, 32]
    assert parts[0].native["blocks"][0]["text"]["text"] == "part 0"
    assert parts[-1].native["blocks"][-1]["type"] == "actions"
    assert all(b["type"] != "actions" for b in parts[0].native["blocks"])
    assert parts[1].text.startswith("part 25")


def test_components_go_to_their_own_last_message_when_the_body_is_full() -> None:
    blocks: list[Block] = [Image(f"https://x.test/{i}.png") for i in range(50)]
    parts = check(render(OutboundMessage((*blocks, Buttons((Button("OK", "ok"),))))))
    assert [len(p.native["blocks"]) for p in parts] == [50, 1]
    assert parts[1].text == BUTTONS_ONLY_TEXT


def test_ids_round_trip_through_a_block_actions_payload() -> None:
    refs: dict[str, str] = {}

    def shorten(value: str) -> str:
        refs[f"ref:{len(refs)}"] = value
        return f"ref:{len(refs) - 1}"

    message = OutboundMessage(
        (
            Buttons((Button("Go", "go"), Button("Big", "b" * 3000))),
            Select((SelectOption("Red", "r"), SelectOption("Long", "l" * 200)), "Colour", "c"),
        )
    )
    elements = [e for b in blocks_of(message, shorten=shorten) for e in b["elements"]]
    chosen = []
    for element in elements:
        if element["type"] == "button":
            action = {"type": "button", "action_id": element["action_id"], "block_id": "x"}
            chosen.append(choice_of({**action, "value": element["value"]}))
        else:
            for option in element["options"]:
                action = {"type": "static_select", "action_id": element["action_id"]}
                chosen.append(choice_of({**action, "selected_option": option}))
    assert [refs.get(c, c) for c in chosen if c] == ["go", "b" * 3000, "r", "l" * 200]


@pytest.mark.parametrize("limit", [16, 40, MAX_TEXT])
def test_a_backtick_run_inside_a_line_never_opens_a_code_block(limit: int) -> None:
    """Found by the property test: a context of 18 backticks came out as a chunk "```_"."""
    for block in (Context("`" * 18), Text("see ``````` here", markdown=True)):
        parts = check(render(OutboundMessage((block,)), limit=limit), limit)
        assert all("```" not in part.text for part in parts)
