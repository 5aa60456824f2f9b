"""`inert`: a line the converters return unchanged skips them, with the same result."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chatgate.channels.slack.markdown import _to_slack_mrkdwn, markdown_to_slack_mrkdwn
from chatgate.channels.whatsapp.markdown import _to_whatsapp, markdown_to_whatsapp
from chatgate.presentation.markdown import (
    _to_html,
    _to_plain,
    inert,
    markdown_to_html,
    markdown_to_plain,
)

# Lines of words, and lines with every character some part of the dialect reads (line starts,
# inline syntax, links, escapes, HTML), so the property meets near-misses as well as plain lines.
WORDS = "ab Hh:/.,;?'\"()=$%@{}^0123456789é—"
TEXTS = st.one_of(
    st.text(alphabet=st.sampled_from(list(WORDS)), max_size=40),
    st.text(alphabet=st.sampled_from(list(WORDS + "-+#>\t\r\n\\`*_~[]!<&|")), max_size=40),
)
FULL = (_to_plain, _to_html, _to_slack_mrkdwn, _to_whatsapp)


@settings(max_examples=2000)
@given(TEXTS)
@example("m0 15550100000")
@example("see http: no link, but h://x and Http is text")
@example("a trailing space ")
def test_an_inert_line_is_what_every_converter_gives_back(text: str) -> None:
    if inert(text):
        assert [convert(text) for convert in FULL] == [text] * len(FULL)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " indented",
        "- item",
        "+ item",
        "1. item",
        "> quote",
        "# heading",
        "two\nlines",
        "a\rb",
        "*bold*",
        "_it_",
        "~s~",
        "`code`",
        "[label](url)",
        "see https://example.com",
        "a <b> c",
        "fish & chips",
        "a \\ b",
        "col | col",
        "wow!",
    ],
)
def test_markup_or_escapes_are_never_inert(text: str) -> None:
    assert not inert(text)


def test_the_public_converters_give_an_inert_line_back() -> None:
    line = "Echo: m0 15550100000 (ok)"
    assert inert(line)
    assert markdown_to_plain(line) == line
    assert markdown_to_html(line) == line
    assert markdown_to_whatsapp(line) == line
    assert markdown_to_slack_mrkdwn(line) == line
