"""Slack rendering under pressure: msg_too_long splits, fallback text, random messages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chatgate.channels.base import Rendered
from chatgate.channels.slack import LIMITS
from chatgate.channels.slack.render import (
    BUTTONS_ONLY_TEXT,
    FORMAT,
    MAX_TEXT,
    fallback_text,
    render,
    split_rendered,
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
from chatgate.presentation.degrade import adapt, with_note
from tests.channels.slack.blockkit import blocks_of, check, slack_errors


def test_split_halves_a_text_message_at_a_safe_break() -> None:
    text = "intro words\n```\n" + "\n".join(f"code line {i}" for i in range(200)) + "\n```"
    [only] = render(OutboundMessage.from_text(text), limit=100_000)
    first, second = check(split_rendered(only), limit=100_000)
    assert abs(len(first.text) - len(second.text)) < len(text) // 4
    assert first.text.startswith("intro") and second.text.startswith("```\ncode line")


def test_split_distributes_blocks_and_keeps_components_last() -> None:
    message = OutboundMessage(
        (Text("a"), Image("https://x.test/a.png"), Text("b"), Buttons((Button("OK", "ok"),)))
    )
    [only] = render(message)
    first, second = check(split_rendered(only))
    assert [b["type"] for b in first.native["blocks"]] == ["section", "image"]
    assert [b["type"] for b in second.native["blocks"]] == ["section", "actions"]
    assert (first.text, second.text) == ("a\n\nimage", "b")


@pytest.mark.parametrize(
    ("block", "kinds"),
    [
        (Text("word " * 1000), ["section", "section"]),
        (Buttons(tuple(Button(f"B{i}", f"{i}") for i in range(10))), ["actions", "actions"]),
        (Context("word " * 1000), ["context", "context"]),
        (Image("https://x.test/a.png"), ["image"]),
    ],
)
def test_split_of_a_single_block(block: Block, kinds: list[str]) -> None:
    rendered = Rendered("x", FORMAT, {"blocks": tuple(blocks_of(OutboundMessage((block,)))[-1:])})
    if isinstance(block, Text | Context):  # force Block Kit for a lone text-like block
        rendered = Rendered("x", FORMAT, {"blocks": tuple(_lone(block)), "reply": True})
    parts = split_rendered(rendered)
    assert [b["type"] for p in parts for b in p.native["blocks"]] == kinds
    check([Rendered(p.text, p.format, {**p.native, "reply": i == 0}) for i, p in enumerate(parts)])


def _lone(block: Text | Context) -> list[dict[str, Any]]:
    blocks = blocks_of(OutboundMessage((Image("https://x.test/a.png"), block)))
    return blocks[1:]


TEXT = st.text(alphabet="ab *_~`<>&|[]()#-\n:/.é😀", max_size=60)
URL = st.sampled_from(["https://x.test/a.png", "ftp://x", "", "https://x.test/" + "p" * 3000])
LABEL = st.text(max_size=90)
VALUE = st.one_of(st.none(), st.text(max_size=5), st.just("v" * 2100))
BLOCKS = st.one_of(
    st.builds(lambda t, n: Text(t * n), TEXT, st.integers(1, 200)),
    st.builds(Text, TEXT, st.booleans()),
    st.builds(lambda t, n: Context(t * n), TEXT, st.integers(1, 80)),
    st.just(Divider()),
    st.builds(Image, URL, st.text(max_size=10)),
    st.builds(Chart, st.just("bar"), st.just((Series("s", (1.0, 2.0)),))),
    st.builds(
        lambda n, label, value, url: Buttons(
            tuple(Button(label, value, url if i % 3 == 2 else None) for i in range(n))
        ),
        st.integers(0, 30),
        LABEL,
        VALUE,
        st.sampled_from(["https://x.test", "https://x.test/" + "p" * 3000]),
    ),
    st.builds(
        lambda n, label, value: Select(tuple(SelectOption(label, value) for _ in range(n))),
        st.integers(0, 120),
        LABEL,
        st.text(max_size=200),
    ),
    st.builds(
        lambda cols, rows, cell: Table(
            tuple(cell for _ in range(cols)),
            tuple(tuple(cell for _ in range(cols + r % 3)) for r in range(rows)),
        ),
        st.integers(0, 12),
        st.integers(0, 60),
        st.text(max_size=50),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(BLOCKS, max_size=12), st.integers(1, 30))
@example([Context("~" * 18)], 1)  # halved at a cut that left "~~~_", a fence opener
def test_every_rendered_message_is_one_slack_accepts(blocks: list[Block], repeat: int) -> None:
    message = OutboundMessage(tuple(blocks) * (repeat if len(blocks) <= 3 else 1))
    adapted, report = adapt(message, LIMITS)
    for candidate in (message, with_note(adapted, report)):
        parts = check(render(candidate, shorten=lambda v: "ref:x"))
        for part in parts:
            for half in split_rendered(part):
                assert slack_errors(half) == [], half


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        ([{"type": "divider"}], "———"),
        ([{"type": "actions", "elements": []}], BUTTONS_ONLY_TEXT),
        ([{"type": "image", "image_url": "https://x", "alt_text": "a<b"}], "a&lt;b"),
        (
            [
                {"type": "section", "text": {"type": "mrkdwn", "text": "*s*"}},
                {"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 2},
            ],
            "*s*\n\nc\n\nc",
        ),
    ],
)
def test_fallback_text(blocks: list[dict[str, Any]], expected: str) -> None:
    assert fallback_text(blocks) == expected


def test_fallback_text_is_clipped_with_a_mark() -> None:
    section = {"type": "section", "text": {"type": "mrkdwn", "text": "word " * 599}}
    text = fallback_text([section, section])
    assert len(text) <= MAX_TEXT and text.endswith("\n…")
