"""OutboundMessage model, plain_text and the dict codec agents use for rich replies."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    format_number,
    message_from_dict,
    message_to_dict,
)

FULL = OutboundMessage(
    (
        Text("**Hello** world"),
        Text("raw *stars*", markdown=False),
        Buttons((Button("Yes", "y", style="primary"), Button("Docs", url="https://d.example"))),
        Select((SelectOption("Red", "r"), SelectOption("Blue", "b")), "Pick a colour", "colour"),
        Table(("name", "qty"), (("apple", "3"), ("pear",))),
        Chart("bar", (Series("sales", (1.0, 2.5)),), "Q1"),
        Image("https://img.example/a.png", "a cat"),
        Divider(),
        Context("footnote"),
    )
)


def test_from_text_is_one_markdown_block() -> None:
    assert OutboundMessage.from_text("hi *there*").blocks == (Text("hi *there*", markdown=True),)


def test_blocks_are_frozen() -> None:
    with pytest.raises(FrozenInstanceError):
        FULL.blocks[0].text = "x"  # type: ignore[misc,union-attr]


def test_plain_text_contains_every_visible_string() -> None:
    text = FULL.plain_text
    for expected in (
        "**Hello** world",
        "Yes",
        "https://d.example",
        "Pick a colour",
        "Blue",
        "name | qty",
        "pear",
        "Q1",
        "sales: 1, 2.5",
        "a cat",
        "https://img.example/a.png",
        "footnote",
    ):
        assert expected in text
    assert OutboundMessage(()).plain_text == ""
    assert OutboundMessage((Divider(),)).plain_text == ""


def test_round_trip_through_json() -> None:
    data = message_to_dict(FULL)
    assert message_from_dict(json.loads(json.dumps(data))) == FULL
    assert message_to_dict(message_from_dict(data)) == data


def test_from_dict_defaults_and_coercion() -> None:
    msg = message_from_dict(
        {
            "blocks": [
                {"type": "text", "text": "hi"},
                {"type": "select", "options": [{"label": "A", "value": "a"}]},
                {"type": "table", "columns": ["n", 2], "rows": [[1, 2.5, "x"], [3.0]]},
                {"type": "chart", "series": [{"label": "s", "points": [1, 2.5]}]},
                {"type": "image", "url": "https://x"},
                {"type": "buttons", "buttons": [{"label": "Go"}]},
            ]
        }
    )
    assert msg.blocks == (
        Text("hi", markdown=True),
        Select((SelectOption("A", "a"),), "Choose…", "select"),
        Table(("n", "2"), (("1", "2.5", "x"), ("3",))),
        Chart("bar", (Series("s", (1.0, 2.5)),), ""),
        Image("https://x", ""),
        Buttons((Button("Go"),)),
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "'blocks' list"),
        ({"blocks": "x"}, "'blocks' list"),
        ({"blocks": [{"type": "text", "text": "ok"}, "nope"]}, "block 1: block must be an object"),
        ({"blocks": [{"type": "video"}]}, "block 0: unknown type 'video'"),
        ({"blocks": [{"text": "no type"}]}, "block 0: unknown type None"),
        ({"blocks": [{"type": "text"}]}, "block 0: 'text' must be a string"),
        ({"blocks": [{"type": "text", "text": "a", "markdown": "yes"}]}, "'markdown' must be"),
        ({"blocks": [{"type": "buttons", "buttons": [{"label": 1}]}]}, "'label' must be"),
        ({"blocks": [{"type": "buttons", "buttons": "x"}]}, "'buttons' must be a list"),
        ({"blocks": [{"type": "buttons", "buttons": [{"label": "a", "style": "red"}]}]}, "style"),
        ({"blocks": [{"type": "buttons", "buttons": [{"label": "a", "url": 3}]}]}, "'url'"),
        ({"blocks": [{"type": "select", "options": [{"label": "a"}]}]}, "'value' must be"),
        ({"blocks": [{"type": "table", "columns": [], "rows": ["ab"]}]}, "row must be a list"),
        ({"blocks": [{"type": "table", "columns": [None], "rows": []}]}, "table cell None"),
        ({"blocks": [{"type": "table", "columns": [True], "rows": []}]}, "table cell True"),
        ({"blocks": [{"type": "chart", "series": [{"label": "s", "points": ["1"]}]}]}, "point"),
        ({"blocks": [{"type": "chart", "series": [{"label": "s", "points": [True]}]}]}, "point"),
        ({"blocks": [{"type": "image"}]}, "'url' must be a string"),
        ({"blocks": [{"type": "context", "text": None}]}, "'text' must be a string"),
    ],
)
def test_from_dict_rejects_malformed_input(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        message_from_dict(data)


def test_from_dict_names_the_bad_block_index() -> None:
    blocks: list[dict[str, Any]] = [{"type": "divider"}] * 3 + [{"type": "image", "url": 5}]
    with pytest.raises(ValueError, match=r"^block 3: 'url'"):
        message_from_dict({"blocks": blocks})


@pytest.mark.parametrize(
    ("value", "text"),
    [(3.0, "3"), (-2.0, "-2"), (2.5, "2.5"), (1e20, "1e+20"), (float("nan"), "nan")],
)
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text


_words = st.text(min_size=0, max_size=12)
_blocks = st.one_of(
    st.builds(Text, _words, st.booleans()),
    st.builds(
        Buttons,
        st.lists(
            st.builds(
                Button,
                _words,
                st.none() | _words,
                st.none() | _words,
                st.sampled_from(["default", "primary", "danger"]),
            ),
            max_size=4,
        ).map(tuple),
    ),
    st.builds(
        Select,
        st.lists(st.builds(SelectOption, _words, _words), max_size=4).map(tuple),
        _words,
        _words,
    ),
    st.builds(
        Table,
        st.lists(_words, max_size=3).map(tuple),
        st.lists(st.lists(_words, max_size=3).map(tuple), max_size=3).map(tuple),
    ),
    st.builds(
        Chart,
        _words,
        st.lists(
            st.builds(Series, _words, st.lists(st.floats(allow_nan=False), max_size=3).map(tuple)),
            max_size=2,
        ).map(tuple),
        _words,
    ),
    st.builds(Image, _words, _words),
    st.just(Divider()),
    st.builds(Context, _words),
)


@given(st.lists(_blocks, max_size=6))
def test_round_trip_property(blocks: list[Any]) -> None:
    msg = OutboundMessage(tuple(blocks))
    assert message_from_dict(json.loads(json.dumps(message_to_dict(msg)))) == msg
