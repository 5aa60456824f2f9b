"""WhatsApp rendering after the degrader: formatting, chunks, reply buttons, lists, quotes."""

from __future__ import annotations

from typing import Any

import pytest

from chatgate.channels.base import Rendered
from chatgate.channels.whatsapp import LIMITS
from chatgate.channels.whatsapp.markdown import markdown_to_whatsapp
from chatgate.channels.whatsapp.render import plain_text, render
from chatgate.model.outbound import Button, Buttons, OutboundMessage, Select, SelectOption, Text
from chatgate.model.reasons import DegradeReason
from chatgate.presentation.degrade import adapt, with_note


class OneStore:
    def put(self, value: str) -> str:
        return "1"


def rendered(*blocks: Any) -> tuple[list[Rendered], tuple[DegradeReason, ...]]:
    adapted, report = adapt(OutboundMessage(tuple(blocks)), LIMITS, callback_store=OneStore())
    reasons = report.reasons if report is not None else ()
    return render(with_note(adapted, report), shorten=lambda v: "ref:1"), reasons


def interactive(item: Rendered) -> dict[str, Any]:
    payload = item.native["payload"]
    assert payload["type"] == "interactive"
    result: dict[str, Any] = payload["interactive"]
    return result


MARKDOWN = [
    ("**bold**, *italic*, ~~gone~~", "*bold*, _italic_, ~gone~"),
    ("# Heading", "*Heading*"),
    ("* one\n+ two\n1. three", "- one\n- two\n1. three"),
    ("[docs](https://x.io) and https://y.io", "docs (https://x.io) and https://y.io"),
    ("use `pip`", "use `pip`"),
    ("```python\nprint(1)\n```", "```\nprint(1)\n```"),
    ("***both***", "*_both_*"),
    ("**a**_b_", "*a*\u200b_b_"),
    ("snake_case and 2 * 3", "snake_case and 2 * 3"),
    ("> **quoted**", "> *quoted*"),
    ("---", "———"),
]


@pytest.mark.parametrize(("md", "expected"), MARKDOWN, ids=[m[0] for m in MARKDOWN])
def test_markdown(md: str, expected: str) -> None:
    assert markdown_to_whatsapp(md) == expected


def test_text_is_chunked_at_4096_and_only_the_first_quotes() -> None:
    out, reasons = rendered(Text("word " * 2000))
    assert len(out) == 3 and all(len(r.text) <= 4096 for r in out) and not reasons
    assert [r.native["quote"] for r in out] == [True, False, False]
    assert out[0].native["payload"] == {
        "type": "text",
        "text": {"body": out[0].text, "preview_url": False},
    }


def test_three_buttons_ride_on_the_text_as_reply_buttons() -> None:
    buttons = Buttons(tuple(Button(f"Option {i}", f"v{i}") for i in range(3)))
    [item], reasons = rendered(Text("Which **one**?"), buttons)
    assert reasons == ()
    body = interactive(item)
    assert body["type"] == "button" and body["body"] == {"text": "Which *one*?"}
    assert [b["reply"] for b in body["action"]["buttons"]] == [
        {"id": f"v{i}", "title": f"Option {i}"} for i in range(3)
    ]
    assert item.native["plain"] == "Which one?\n1. Option 0\n2. Option 1\n3. Option 2"


def test_more_buttons_become_a_list_and_over_ten_are_reported() -> None:
    buttons = Buttons(tuple(Button(f"Option {i}", f"v{i}") for i in range(12)))
    [item], reasons = rendered(Text("Pick"), buttons)
    assert reasons == (DegradeReason.BUTTONS_AS_SELECT, DegradeReason.OPTIONS_TRUNCATED)
    body = interactive(item)
    assert body["type"] == "list" and body["action"]["button"] == "Choose…"
    assert [r["id"] for r in body["action"]["sections"][0]["rows"]] == [f"v{i}" for i in range(10)]
    assert body["body"]["text"].endswith("_(Note: 12 buttons shown as a list; 2 options dropped.)_")


def test_long_titles_and_values_fit_whatsapp() -> None:
    long_value = "x" * 300
    buttons = Buttons((Button("A label far longer than twenty", long_value), Button("B", "b")))
    [item], reasons = rendered(Text("Go"), buttons)
    assert DegradeReason.LABEL_SHORTENED in reasons
    replies = [b["reply"] for b in interactive(item)["action"]["buttons"]]
    assert replies[0] == {"id": "ref:1", "title": "A label far longer…"}
    assert all(len(r["title"]) <= 20 for r in replies)


def test_a_small_select_is_offered_as_buttons() -> None:
    select = Select((SelectOption("Red", "r"), SelectOption("Blue", "b")), "Colour?")
    [item], _ = rendered(select)
    body = interactive(item)
    assert body["type"] == "button" and body["body"] == {"text": "Colour?"}


def test_a_menu_after_long_text_follows_with_a_prompt() -> None:
    out, _ = rendered(Text("a" * 2000), Buttons((Button("Yes", "y"),)))
    assert [r.native["payload"]["type"] for r in out] == ["text", "interactive"]
    assert interactive(out[1])["body"] == {"text": "Choose an option:"}
    assert [r.native["quote"] for r in out] == [True, False]


def test_link_buttons_and_second_menus_become_text() -> None:
    out, reasons = rendered(
        Buttons((Button("Docs", url="https://d.io"), Button("Yes", "y"))),
        Select((SelectOption("One", "1"),)),
    )
    assert set(reasons) == {DegradeReason.LINK_BUTTONS_AS_TEXT, DegradeReason.WIDGETS_AS_TEXT}
    [item] = out
    body = interactive(item)
    assert "1. Docs (https://d.io)" in body["body"]["text"] and "1. One" in body["body"]["text"]
    assert [b["reply"]["id"] for b in body["action"]["buttons"]] == ["y"]


def test_a_text_chunks_plain_form_is_worked_out_only_when_asked_for() -> None:
    chunks, _ = rendered(Text("**Done**: see [the docs](https://example.com/docs)"))
    [chunk] = chunks
    assert "plain" not in chunk.native  # a send inside the window never needs it
    assert plain_text(chunk) == "Done: see the docs (https://example.com/docs)"
    assert plain_text(Rendered("*as is*")) == "*as is*"  # not ours: kept as written


def test_a_menus_plain_form_lists_its_choices() -> None:
    chunks, _ = rendered(Text("Pick one"), Buttons((Button("Yes", "y"), Button("No", "n"))))
    assert plain_text(chunks[-1]) == "Pick one\n1. Yes\n2. No"
