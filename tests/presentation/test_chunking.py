"""chunk_text: boundaries, code fences, UTF-16 lengths, plus hypothesis properties."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chatgate.presentation.chunking import chunk_text, utf16_len
from chatgate.presentation.markdown import Fence, closes_fence, parse_fence
from tests.presentation.helpers import fence_lines, fences_balanced

FAMILY = "👨\u200d👩\u200d👧"


@pytest.mark.parametrize(
    ("text", "units"),
    [("", 0), ("abc", 3), ("é", 1), ("😀", 2), ("a😀b", 4), (FAMILY, 8), ("\U0010ffff", 2)],
)
def test_utf16_len(text: str, units: int) -> None:
    assert utf16_len(text) == units


def test_rejects_tiny_limits() -> None:
    with pytest.raises(ValueError, match="limit must be >= 16"):
        chunk_text("hello", 15)


@pytest.mark.parametrize("text", ["", "   ", "\n\n \t\n"])
def test_blank_text_gives_no_chunks(text: str) -> None:
    assert chunk_text(text, 100) == []


def test_short_text_is_one_chunk() -> None:
    assert chunk_text("  indented\nline two", 100) == ["  indented\nline two"]
    assert chunk_text("\n\nhello  \n\n", 100) == ["hello"]


def test_prefers_paragraph_then_line_then_word() -> None:
    para = "alpha beta\ngamma delta\n\nepsilon zeta"
    assert chunk_text(para, 30) == ["alpha beta\ngamma delta", "epsilon zeta"]
    lines = "alpha beta\ngamma delta epsilon"
    assert chunk_text(lines, 20) == ["alpha beta", "gamma delta epsilon"]
    words = "one two three four five six"
    assert chunk_text(words, 16) == ["one two three", "four five six"]


def test_hard_splits_only_overlong_words() -> None:
    # "ab" alone would be under the minimum chunk (16 // 4): it rides with the long word
    assert chunk_text("ab " + "x" * 40, 16) == ["ab " + "x" * 13, "x" * 16, "x" * 11]
    assert chunk_text("abcd " + "x" * 40, 16) == ["abcd", "x" * 16, "x" * 16, "x" * 8]


def test_code_block_is_closed_and_reopened_with_its_info_string() -> None:
    code = "\n".join(f"print({i})" for i in range(12))
    text = f"Intro.\n\n```python\n{code}\n```\n\nOutro."
    chunks = chunk_text(text, 60)
    assert chunks[0].startswith("Intro.\n\n```python\nprint(0)")  # no 6-character chunk
    assert chunks[-1].endswith("```\n\nOutro.")
    code_chunks = chunks
    assert len(code_chunks) >= 3
    for chunk in code_chunks:
        assert "```python\n" in chunk and "\n```" in chunk
        assert len(chunk) <= 60
    body = [line for c in code_chunks for line in c.split("\n") if line.startswith("print")]
    assert body == code.split("\n")


def test_no_empty_code_block_at_a_boundary() -> None:
    text = "x" * 10 + "\n```\n" + "y" * 12 + "\n```\nz"
    for limit in range(16, 40):
        for chunk in chunk_text(text, limit):
            assert "```\n```" not in chunk, (limit, chunk)


def test_tilde_and_indented_fences() -> None:
    text = "- step:\n  ~~~~sh\n  " + "\n  ".join(f"echo {i}" for i in range(8)) + "\n  ~~~~"
    chunks = chunk_text(text, 40)
    assert len(chunks) > 1
    for chunk in chunks[1:]:
        assert chunk.startswith("  ~~~~sh\n")
    for chunk in chunks:
        assert chunk.rstrip().endswith("~~~~")


def test_unclosed_fence_is_closed() -> None:
    assert chunk_text("```\ncode", 100) == ["```\ncode\n```"]


def test_long_info_string_is_shortened_when_reopening() -> None:
    text = "```python title=example.py\n" + "a = 1\n" * 6 + "```"
    chunks = chunk_text(text, 30)
    assert all(len(c) <= 30 for c in chunks)
    assert chunks[0].startswith("```python title")
    assert all(c.startswith("```python\n") for c in chunks[1:])


def test_utf16_limit_with_astral_characters() -> None:
    chunks = chunk_text("😀" * 20, 16, length=utf16_len)
    assert chunks == ["😀" * 8, "😀" * 8, "😀" * 4]


def test_emoji_sequences_and_combining_marks_stay_whole() -> None:
    for chunk in chunk_text(FAMILY * 10, 16, length=utf16_len):
        assert chunk == FAMILY * 2
    for chunk in chunk_text("e\u0301" * 30, 16):
        assert not unicodedata.combining(chunk[0])


def test_indentation_survives_a_line_break() -> None:
    text = "```py\ndef f():\n    return 1\n    return 2\n```"
    chunks = chunk_text(text, 30)
    assert any(line.startswith("    return") for c in chunks[1:] for line in c.split("\n"))


# --- properties --------------------------------------------------------------------------

LENGTHS: list[Callable[[str], int]] = [len, utf16_len]
_limits = st.integers(min_value=16, max_value=120)
_length = st.sampled_from(LENGTHS)


def _solid(text: str) -> str:
    return "".join(text.split())


def _drop_fences(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if line not in fence_lines(text))


def _has_fence_line(text: str) -> bool:
    return any(line.lstrip().startswith(("```", "~~~")) for line in text.split("\n"))


@given(st.text(max_size=400), _limits, _length)
@example("_" + "~" * 18 + "_", 16, len)  # every cut in reach made the rest read as a fence
@example("a " + "`" * 40 + " b", 16, len)
def test_chunks_fit_for_any_text(text: str, limit: int, length: Callable[[str], int]) -> None:
    chunks = chunk_text(text, limit, length=length)
    assert all(length(c) <= limit and c.strip() for c in chunks)
    if not _has_fence_line(text):  # nothing lost, and no cut turns a piece into a fence line
        assert _solid("".join(chunks)) == _solid(text)
        assert not any(_has_fence_line(c) for c in chunks), chunks


_WORDS = ["a", "bc", "déf", "😀😀", FAMILY, "中文字", "e\u0301", "**bold**", "snake_case", "end."]
_WORDS += ["x" * 25, "😀" * 9, "-", "1."]
_prose = st.lists(
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=10).map(" ".join), min_size=1, max_size=4
)
_code_line = st.text(alphabet=" abc(){}=;:#\t<>&😀", max_size=30)


@st.composite
def _documents(draw: st.DrawFn) -> str:
    parts: list[str] = []
    count = draw(st.integers(1, 5))
    for index in range(count):
        if draw(st.booleans()):
            parts.append("\n".join(draw(_prose)))
        else:
            lang = draw(st.sampled_from(["", "python", "js", "c++ title"]))
            lines = draw(st.lists(_code_line, max_size=8))
            closed = index < count - 1 or draw(st.booleans())
            parts.append("\n".join([f"```{lang}", *lines, *(["```"] if closed else [])]))
    return "\n\n".join(parts)


@given(_documents(), _limits, _length)
@example("```c++ title\n:", 16, len)  # cut inside the info string
@example("```\n\n\n \n \n \n \n```", 16, len)  # the tail floor cut the opening fence line
def test_markdown_chunks_are_balanced_and_lossless(
    text: str, limit: int, length: Callable[[str], int]
) -> None:
    chunks = chunk_text(text, limit, length=length)
    for chunk in chunks:
        assert length(chunk) <= limit
        assert fences_balanced(chunk), chunk
        lines = chunk.split("\n")
        candidates = [lines, lines[1:], lines[:-1], lines[1:-1]]
        assert any(c and "\n".join(c).strip() in text for c in candidates), chunk
    assert _solid(_drop_fences("\n".join(chunks))) == _solid(_drop_fences(text))


@st.composite
def _absurd_documents(draw: st.DrawFn) -> str:
    """Documents with a fence too long to close and re-open within the limit (9+ backticks at
    a limit of at most 22): the chunker keeps the text and gives up on balance."""
    marker = "`" * draw(st.integers(9, 12))
    lines = draw(st.lists(_code_line, max_size=6))
    before = draw(_prose)
    return "\n".join([*before, marker + draw(st.sampled_from(["", "py"])), *lines, marker])


@given(_absurd_documents(), st.integers(16, 22), _length)
def test_absurd_fences_keep_every_character(
    text: str, limit: int, length: Callable[[str], int]
) -> None:
    chunks = chunk_text(text, limit, length=length)
    assert all(length(c) <= limit and c.strip() for c in chunks)
    assert _solid("".join(chunks)) == _solid(text)  # nothing added (no fences), nothing lost


def _code_and_prose(text: str) -> tuple[bool, str]:
    """Whether a fence is left open, by the renderer's own fence rules (tilde, longer,
    indented), and the visible characters of every line that is not a fence line."""
    fence: Fence | None = None
    kept: list[str] = []
    for line in text.split("\n"):
        if fence is None:
            fence = parse_fence(line)
            kept += [line] if fence is None else []
        elif closes_fence(line, fence):
            fence = None
        else:
            kept.append(line)
    return fence is not None, _solid("".join(kept))


@st.composite
def _fence_dialect_documents(draw: st.DrawFn) -> str:
    """Prose and code blocks with tilde, longer and indented fences, closers longer than their
    openers, and code lines holding backticks and tildes."""
    parts: list[str] = []
    count = draw(st.integers(1, 5))
    for index in range(count):
        if draw(st.booleans()):
            parts.append("\n".join(draw(_prose)))
            continue
        indent = draw(st.sampled_from(["", " ", "  ", "\t"]))
        marker = draw(st.sampled_from(["```", "````", "~~~", "~~~~~"]))
        lang = draw(st.sampled_from(["", "python", "c++ title", " js "]))
        lines = draw(st.lists(st.text(alphabet=" ab(){}:#\t<&😀`~", max_size=30), max_size=8))
        close = draw(st.sampled_from([marker, marker + marker[0], f"{indent}{marker} "]))
        closed = index < count - 1 or draw(st.booleans())
        parts.append("\n".join([f"{indent}{marker}{lang}", *lines, *([close] if closed else [])]))
    return "\n\n".join(parts)


# from 18 on every fence here closes and re-opens within the limit with room to spare
@given(_fence_dialect_documents(), st.integers(18, 120), _length)
@example("~~~~~\n~~~~~\n\n  ````", 18, len)
def test_every_fence_dialect_stays_balanced(
    text: str, limit: int, length: Callable[[str], int]
) -> None:
    chunks = chunk_text(text, limit, length=length)
    assert all(length(c) <= limit and c.strip() for c in chunks)
    assert not any(_code_and_prose(c)[0] for c in chunks), chunks
    assert "".join(_code_and_prose(c)[1] for c in chunks) == _code_and_prose(text)[1]
