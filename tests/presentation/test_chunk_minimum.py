"""Chunks read well: none under the minimum (unless the whole message is that short), on every
channel's limit, and a paragraph just over the limit splits at a sentence."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.channels.slack.render import chunks as slack_chunks
from chatgate.presentation.chunking import chunk_text, min_chunk, utf16_len
from tests.presentation.helpers import fences_balanced

Chunker = Callable[[str, int], list[str]]

# (channel, limit, how the channel splits a text)
PLATFORMS: list[tuple[str, int, Chunker]] = [
    ("telegram", 4096, lambda t, n: chunk_text(t, n, length=utf16_len)),
    ("slack", 3000, slack_chunks),
    ("discord", 2000, lambda t, n: chunk_text(t, n, length=utf16_len)),
    ("whatsapp", 4096, chunk_text),
]

SENTENCE = "The quick brown fox jumps over the lazy dog near the river bank today. "


def _sentences(chars: int) -> str:
    return (SENTENCE * (chars // len(SENTENCE) + 1))[:chars].rstrip() + "."


def _assert_reads_well(chunks: list[str], limit: int, length: Callable[[str], int]) -> None:
    assert all(length(c) <= limit for c in chunks)
    if len(chunks) > 1:
        assert min(len(c) for c in chunks) >= min_chunk(limit), [len(c) for c in chunks]


@pytest.mark.parametrize(("platform", "limit", "split"), PLATFORMS, ids=[p[0] for p in PLATFORMS])
@pytest.mark.parametrize(
    "shape",
    [
        # the reported answer: a tiny paragraph before one just over the limit, and a tail
        lambda n: f"Note.\n\n{_sentences(n + 10)}\n\n{_sentences(n - 20)}\n\nThanks",
        lambda n: f"{_sentences(n - 3)}\n\nOK.",  # a tiny closing paragraph
        lambda n: _sentences(n + 1),  # one paragraph a character over the limit
        lambda n: "Intro:\n\n```python\n" + "x = 1\n" * (n // 6) + "```\n\nDone.",  # code
        lambda n: ("word " * (n // 5 + 2)).strip(),  # no sentence at all
    ],
    ids=["reported", "tiny-tail", "just-over", "code", "words"],
)
def test_no_tiny_chunk_on_any_channel(
    platform: str, limit: int, split: Chunker, shape: Callable[[int], str]
) -> None:
    text = shape(limit)
    chunks = split(text, limit)
    length = len if platform in ("slack", "whatsapp") else utf16_len
    _assert_reads_well(chunks, limit, length)
    assert all(fences_balanced(c) for c in chunks)


@pytest.mark.parametrize("limit", [2000, 3000, 4096])
def test_a_paragraph_just_over_the_limit_splits_at_a_sentence(limit: int) -> None:
    first, second = chunk_text(_sentences(limit + 40), limit)
    assert first.endswith(".") and second[0].isupper()  # whole sentences on both sides
    assert len(second) >= min_chunk(limit)


@pytest.mark.parametrize(
    ("limit", "floor"), [(16, 4), (100, 25), (2000, 400), (3000, 400), (4096, 400)]
)
def test_minimum_per_limit(limit: int, floor: int) -> None:
    assert min_chunk(limit) == floor


_WORD = st.text("abcdefghij", min_size=1, max_size=30)
_SENT = st.lists(_WORD, min_size=1, max_size=12).map(lambda ws: " ".join(ws) + ".")
_PROSE = st.one_of(
    st.lists(_SENT, min_size=1, max_size=6).map(" ".join),
    st.lists(_WORD, min_size=1, max_size=5).map(lambda ws: "\n".join("- " + w for w in ws)),
)
_CODE = st.lists(_WORD, min_size=1, max_size=5).map(lambda ws: "```py\n" + "\n".join(ws) + "\n```")


def _texts(paragraph: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(paragraph, min_size=1, max_size=16).map("\n\n".join)


def _check_minimum(text: str, limit: int) -> None:
    chunks = chunk_text(text, limit)
    _assert_reads_well(chunks, limit, len)
    if len(text.strip()) < min_chunk(limit):
        assert len(chunks) == 1


@settings(max_examples=150, deadline=None)
@given(text=_texts(_PROSE), limit=st.sampled_from([16, 24, 40, 80, 200]))
def test_property_prose_has_no_chunk_under_the_minimum(text: str, limit: int) -> None:
    _check_minimum(text, limit)


# Below ~40 characters a code block's own fence lines can leave no split that keeps both the
# fences balanced and every chunk over the minimum; balanced fences win there.
@settings(max_examples=150, deadline=None)
@given(text=_texts(st.one_of(_PROSE, _CODE)), limit=st.sampled_from([40, 80, 200, 500]))
def test_property_with_code_no_chunk_under_the_minimum(text: str, limit: int) -> None:
    _check_minimum(text, limit)
