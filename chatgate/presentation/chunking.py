"""Split long markdown into chunks a channel accepts, keeping code fences balanced per chunk."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from chatgate.presentation.markdown import Fence, closes_fence, parse_fence

MIN_LIMIT = 16
MAX_MIN_CHUNK = 400  # no chunk shorter than this (or a quarter of the limit), but the last
_WORD_START = re.compile(r"(?<=[ \t])[^\s]")
_SENTENCE_START = re.compile(r"(?<=[.!?…。])[\"'”’»)\]]*[ \t]+(?=\S)")
_BLANK_LINE = re.compile(r"[ \t\r\f\v]*\n")
_JOINERS = frozenset("\u200d\ufe0e\ufe0f")
_MAX_BACKOFF = 32
_MIN_BODY = 4  # characters of content a chunk must hold besides its fence lines

Length = Callable[[str], int]


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as Telegram counts (astral characters count 2)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@dataclass(frozen=True)
class _Layout:
    """Line structure of the text: fence state per line and candidate break positions."""

    text: str
    starts: list[int]  # offset of each line
    kinds: list[str]  # "text", "open", "content" or "close"
    inside: list[Fence | None]  # fence open at the start of each line
    opened: list[Fence | None]  # fence each "open" line opens
    after_last: Fence | None  # fence still open at the end of the text
    breaks: tuple[list[int], list[int], list[int], list[int]]  # paragraph, line, sentence, word

    def line(self, pos: int) -> int:
        return bisect_right(self.starts, pos) - 1

    def state(self, pos: int) -> Fence | None:
        """The fence open just before `pos`, when a chunk ends (or starts) there."""
        if pos >= len(self.text):
            return self.after_last
        k = self.line(pos)
        if pos == self.starts[k] or self.kinds[k] in ("content", "close"):
            return self.inside[k]
        return self.opened[k]  # a cut inside an opening line still opens its fence

    def cut_ok(self, pos: int, cut: int, *, head_only: bool = False) -> bool:
        """Whether cutting a line at `cut` keeps fences intact: the piece ending this chunk and
        (unless ``head_only``) the piece starting the next must not turn into a fence line."""
        text = self.text
        k = self.line(cut)
        if cut == self.starts[k]:
            return True
        end = text.find("\n", cut)
        head, tail = text[max(self.starts[k], pos) : cut], text[cut : end if end >= 0 else None]
        kind, fence = self.kinds[k], self.inside[k] or self.opened[k]
        if fence is None:
            return parse_fence(head) is None and (head_only or parse_fence(tail) is None)
        if not head_only and closes_fence(tail, fence):
            return False
        if kind == "open":
            opening = parse_fence(head)
            return opening is not None and opening.marker == fence.marker
        return not closes_fence(head, fence)


def _layout(text: str, *, fences: bool = True) -> _Layout:
    lines = text.split("\n")
    starts, kinds, inside, opened, fence = _lines(lines, fences=fences)
    return _Layout(text, starts, kinds, inside, opened, fence, _breaks(text, lines, starts, kinds))


_Lines = tuple[list[int], list[str], list[Fence | None], list[Fence | None], Fence | None]


def _lines(lines: list[str], *, fences: bool) -> _Lines:
    """Each line's offset, kind, the fence open at its start and the fence it opens; and the
    fence still open after the last line."""
    starts: list[int] = []
    kinds: list[str] = []
    inside: list[Fence | None] = []
    opened: list[Fence | None] = []
    offset = 0
    fence: Fence | None = None
    for line in lines:
        starts.append(offset)
        inside.append(fence)
        offset += len(line) + 1
        if fence is None:
            fence = parse_fence(line) if fences else None
            kinds.append("text" if fence is None else "open")
        elif closes_fence(line, fence):
            kinds.append("close")
            fence = None
        else:
            kinds.append("content")
        opened.append(fence if kinds[-1] == "open" else None)
    return starts, kinds, inside, opened, fence


def _breaks(
    text: str, lines: list[str], starts: list[int], kinds: list[str]
) -> tuple[list[int], list[int], list[int], list[int]]:
    """Candidate break positions: paragraph, line, sentence, word."""
    # no break right after an opener: it would leave an empty code block behind
    line_breaks = [starts[k] for k in range(1, len(lines)) if kinds[k - 1] != "open"]
    paragraph = [p for p in line_breaks if not lines[bisect_right(starts, p) - 1].strip()]
    delimiters = {k for k, kind in enumerate(kinds) if kind in ("open", "close")}
    words = [
        m.start()
        for m in _WORD_START.finditer(text)
        if bisect_right(starts, m.start()) - 1 not in delimiters
    ]
    sentences = [
        m.end()
        for m in _SENTENCE_START.finditer(text)
        if kinds[bisect_right(starts, m.end()) - 1] == "text"
    ]
    return paragraph, line_breaks, sentences, words


def _skip_blank(text: str, pos: int) -> int:
    """Skip whitespace-only lines (and trailing whitespace) at a chunk start."""
    while m := _BLANK_LINE.match(text, pos):
        pos = m.end()
    return len(text) if not text[pos:].strip() else pos


def _longest_fit(text: str, pos: int, budget: int, length: Length) -> int:
    """Largest end with length(text[pos:end]) <= budget (each character counts at least 1)."""
    lo, hi = pos, min(len(text), pos + max(budget, 0))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if length(text[pos:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _splits_cluster(text: str, b: int) -> bool:
    """Whether cutting before text[b] would separate a character from its modifiers."""
    ch, prev = text[b], text[b - 1]
    return bool(
        unicodedata.combining(ch)
        or ch in _JOINERS
        or "\U0001f3fb" <= ch <= "\U0001f3ff"
        or prev == "\u200d"
        or "\ud800" <= prev <= "\udbff"
        or (prev == "\r" and ch == "\n")
    )


def _hard_break(layout: _Layout, pos: int, end: int, *, head_only: bool = False) -> int | None:
    """A cut at or shortly before `end` that splits no character cluster and no fence line,
    or None when there is none."""
    text = layout.text
    k = layout.line(end)
    if end < len(text) and layout.kinds[k] in ("open", "close") and pos < layout.starts[k] < end:
        return layout.starts[k]  # keep a fence line whole
    for cut in range(end, max(pos, end - _MAX_BACKOFF), -1):
        whole = cut >= len(text) or not _splits_cluster(text, cut)
        if whole and layout.cut_ok(pos, cut, head_only=head_only):
            return cut
    return None


def min_chunk(limit: int) -> int:
    """The shortest chunk worth sending alone for a channel ``limit`` (characters)."""
    return min(MAX_MIN_CHUNK, limit // 4)


def _tail_start(text: str, floor: int) -> int:
    """The latest cut that still leaves ``floor`` visible characters after it."""
    at, seen = len(text), 0
    while at > 0 and seen < floor:
        at -= 1
        seen += not text[at].isspace()
    return at


def _best_break(
    layout: _Layout, pos: int, end: int, prefix: str, limit: int, length: Length, floor: int
) -> int | None:
    """The last paragraph, else line, else sentence, else word boundary whose chunk fits and
    leaves at least ``floor`` characters on both sides, or None."""
    text = layout.text
    while end < len(text) and text[end].isspace():  # trailing whitespace is dropped anyway
        end += 1
    tail_end = len(text.rstrip())
    lo, hi = pos + floor, min(end, tail_end - floor)
    for candidates in layout.breaks:
        i = bisect_right(candidates, hi) - 1
        while i >= 0 and candidates[i] > pos and candidates[i] >= lo:
            cut = candidates[i]
            body = text[pos:cut].rstrip()
            if not body or len(body) < floor:
                break  # earlier candidates only leave less
            if tail_end - cut < 4 * floor and tail_end - _next_start(layout, cut) < floor:
                i -= 1
                continue
            fits = length(prefix + body + _closer(layout.state(cut))) <= limit
            if fits and layout.cut_ok(pos, cut):
                return cut
            i -= 1
    return None


def _next_start(layout: _Layout, cut: int) -> int:
    """Where the next chunk starts: past blank lines, and past a closing fence line the
    previous chunk already closed itself, and past the rest of an opening fence line cut
    inside its info string (the next chunk re-opens the fence itself)."""
    if cut < len(layout.text):
        k = layout.line(cut)
        if layout.kinds[k] == "open" and cut > layout.starts[k]:
            cut = layout.starts[k + 1] if k + 1 < len(layout.starts) else len(layout.text)
    pos = _skip_blank(layout.text, cut)
    if pos < len(layout.text):
        k = layout.line(pos)
        if pos == layout.starts[k] and layout.kinds[k] == "close":
            nxt = layout.starts[k + 1] if k + 1 < len(layout.starts) else len(layout.text)
            pos = _skip_blank(layout.text, nxt)
    return pos


def _closer(fence: Fence | None) -> str:
    return "" if fence is None else "\n" + fence.closing()


def _reopen(fence: Fence | None, limit: int, reserve: int, length: Length) -> str:
    """The fence line re-opening a split code block, shortened if the limit is tight."""
    if fence is None:
        return ""
    for candidate in (fence, Fence(fence.indent, fence.marker, fence.lang)):
        prefix = candidate.opening() + "\n"
        if limit - length(prefix) - reserve >= _MIN_BODY:
            return prefix
    return _bare_opening(fence)


def _bare_opening(fence: Fence) -> str:
    return fence.marker + "\n"


def _planned(text: str, limit: int, length: Length) -> tuple[_Layout, int]:
    """The text's layout and the room kept for closing a fence; fences too long to close and
    re-open within ``limit`` are not tracked (the text is kept, not the balance)."""
    layout = _layout(text)
    fences = {f for f in (*layout.inside, layout.after_last) if f is not None}
    reserve = max((length(_closer(f)) for f in fences), default=0)
    if any(limit - length(_bare_opening(f)) - reserve < _MIN_BODY for f in fences):
        return _layout(text, fences=False), 0
    return layout, reserve


def _hard_cut(layout: _Layout, pos: int, end: int, floor: int) -> tuple[int, bool]:
    """A cut inside a word, leaving a tail worth sending, and whether the next piece reads as
    a fence line (a run of fence characters longer than a chunk) and must be cut short too."""
    short = max(min(end, _tail_start(layout.text, floor)), pos + 1)
    cut = _hard_break(layout, pos, short)
    if cut is None:  # the tail floor would cut a fence line: a shorter tail it is
        cut = _hard_break(layout, pos, end)
    if cut is not None:
        return cut, False
    return _hard_break(layout, pos, end, head_only=True) or end, True


def chunk_text(text: str, limit: int, *, length: Length = len) -> list[str]:
    """Split `text` into chunks with length(chunk) <= limit, never leaving a fence open.

    Breaks at the last paragraph, else line, else sentence, else word boundary that fits and
    leaves no chunk under `min_chunk(limit)` characters but the whole text; splits a word only
    when it alone is too long. A code block split across chunks is closed at the end of one
    chunk and re-opened with its info string at the start of the next. Whitespace at break
    points is dropped. `length` must be additive and count each character at least 1 (len,
    utf16_len, UTF-8 bytes). Whitespace-only text gives []. A fence too long to close and
    re-open within `limit` is not tracked: the chunks then keep every character, unbalanced.
    """
    if limit < MIN_LIMIT:
        raise ValueError(f"limit must be >= {MIN_LIMIT}, got {limit}")
    if "```" not in text and "~~~" not in text:  # the common short reply: no layout needed
        body = text[_skip_blank(text, 0) :].rstrip()
        if length(body) <= limit:
            return [body] if body else []
    layout, reserve = _planned(text, limit, length)
    chunks: list[str] = []
    floor = min_chunk(limit)
    pos = _skip_blank(text, 0)
    forced = False  # the last cut left a piece that reads as a fence line: cut it short too
    while pos < len(text):
        prefix = _reopen(layout.state(pos), limit, reserve, length)
        if not forced and len(text) - pos <= limit:  # every character counts at least 1
            final = prefix + text[pos:].rstrip() + _closer(layout.after_last)
            if length(final) <= limit:
                chunks.append(final)
                break
        budget = limit - length(prefix)
        end = _longest_fit(text, pos, budget, length)
        cut = _best_break(layout, pos, end, prefix, limit, length, floor)
        forced = False
        if cut is None:
            end = _longest_fit(text, pos, budget - reserve, length)
            if end <= pos:
                raise ValueError(f"limit {limit} cannot hold a single character of this text")
            cut, forced = _hard_cut(layout, pos, end, floor)
        chunks.append(prefix + text[pos:cut].rstrip() + _closer(layout.state(cut)))
        pos = _next_start(layout, cut)
    return chunks
