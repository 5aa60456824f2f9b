"""Inline markdown of one line → flat styled runs (shared by every markdown renderer).

Follows the CommonMark delimiter-run rules closely enough for LLM output: flanking decides
whether `*`/`_` can open or close (so snake_case and "a * b" stay literal), unmatched markers
stay literal text, code spans win over emphasis, and links/URLs are opaque to emphasis.
Emphasis never spans lines. Flattening to runs makes every renderer's output balanced by
construction.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field

_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*)>")
_EMAIL_AUTOLINK = re.compile(r"<([A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]+@[A-Za-z0-9\-.]+\.[A-Za-z]+)>")
_BARE_URL = re.compile(r"https?://[^\s<>]{1,2048}", re.IGNORECASE)
_TITLE = re.compile(r"\s+(?:\"[^\"]{0,512}\"|'[^']{0,512}'|\([^()]{0,512}\))")
# a link destination: no spaces, parentheses balanced one level deep (linear: no ambiguity)
_DESTINATION = re.compile(r"(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*+\))++")
_URL_TRAILING = ".,:;!?\"'*_~"
# The characters `_Tokenizer.run` treats specially; a stretch of anything else is plain text.
_MAY_START = frozenset("\\`*_~[!<hH")
_NEXT_SYNTAX = re.compile(r"[\\`*_~\[!<hH]")


@dataclass(frozen=True)
class LinkTarget:
    """A link's destination; `ident` keeps two adjacent links to one URL apart."""

    url: str
    ident: int


@dataclass(frozen=True)
class Run:
    """A maximal piece of text with one set of styles ("b", "i", "s")."""

    text: str
    styles: frozenset[str] = frozenset()
    code: bool = False
    link: LinkTarget | None = None


@dataclass(frozen=True)
class _Code:
    text: str


@dataclass
class _Delim:
    char: str
    count: int
    can_open: bool
    can_close: bool
    orig: int


@dataclass
class _Group:
    kind: str  # "b", "i", "s" or "a"
    children: list[_Node]
    link: LinkTarget | None = None


_Node = str | _Code | _Delim | _Group


def _is_punct(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch)[0] in "PS"


def _flanking(before: str, after: str) -> tuple[bool, bool]:
    """(left-flanking, right-flanking) of a delimiter run between two characters."""
    left = not after.isspace() and (not _is_punct(after) or before.isspace() or _is_punct(before))
    right = not before.isspace() and (not _is_punct(before) or after.isspace() or _is_punct(after))
    return left, right


def _delim(char: str, count: int, before: str, after: str) -> _Delim:
    left, right = _flanking(before, after)
    if char == "_":
        can_open = left and (not right or _is_punct(before))
        can_close = right and (not left or _is_punct(after))
    else:
        can_open, can_close = left, right
    return _Delim(char, count, can_open, can_close, count)


def _match_brackets(s: str) -> dict[int, int]:
    """Position of each "[" → its matching "]", ignoring backslash-escaped brackets."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            stack.append(i)
        elif ch == "]" and stack:
            pairs[stack.pop()] = i
        i += 1
    return pairs


def _unescape(text: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def _destination(s: str, start: int) -> tuple[str, int] | None:
    """Parse "(url "title")" at `start` (just after "]("); return (url, index after ")")."""
    n = len(s)
    k = start
    if k < n and s[k] == "<":
        close = s.find(">", k + 1)
        if close < 0 or "<" in s[k + 1 : close]:
            return None
        url, k = s[k + 1 : close], close + 1
    else:
        m = _DESTINATION.match(s, start)
        url, k = (m.group(), m.end()) if m else ("", start)
    title = _TITLE.match(s, k)
    k = title.end() if title else k
    while k < n and s[k] in " \t":
        k += 1
    if k >= n or s[k] != ")" or not url.strip():
        return None
    return _unescape(url.strip()), k + 1


def _bare_url(s: str, i: int) -> int:
    """End of a bare http(s) URL starting at `i`, or `i` when there is none."""
    if i > 0 and (s[i - 1].isalnum() or s[i - 1] in "/@"):
        return i
    m = _BARE_URL.match(s, i)
    if not m:
        return i
    end = m.end()
    while end > i:
        tail = s[end - 1]
        url = s[i:end]
        if tail in _URL_TRAILING or (
            tail in ")]" and url.count(tail) > url.count("(" if tail == ")" else "[")
        ):
            end -= 1
            continue
        break
    return end if end > s.index("://", i) + 3 else i


class _Tokenizer:
    """Splits one line into literal text, code spans, links and delimiter runs."""

    def __init__(self, s: str, links: bool, counter: list[int]) -> None:
        self.s = s
        self.links = links
        self.counter = counter
        self.nodes: list[_Node] = []
        self.buf: list[str] = []
        self.brackets = _match_brackets(s) if links and "[" in s else {}
        runs = [(m.start(), m.end()) for m in re.finditer(r"`+", s)]
        self.tick_starts: dict[int, list[int]] = {}
        for start, end in runs:
            self.tick_starts.setdefault(end - start, []).append(start)

    def flush(self) -> None:
        if self.buf:
            self.nodes.append("".join(self.buf))
            self.buf = []

    def emit(self, node: _Node) -> None:
        self.flush()
        self.nodes.append(node)

    def link(self, label: str, url: str, *, literal: bool = False) -> None:
        self.counter[0] += 1
        if not label.strip():
            label, literal = url.removeprefix("mailto:"), True
        children: list[_Node] = (
            [label] if literal else parse_nodes(label, links=False, counter=self.counter)
        )
        self.emit(_Group("a", children, LinkTarget(url, self.counter[0])))

    def code_span(self, i: int) -> int:
        s = self.s
        j = i
        while j < len(s) and s[j] == "`":
            j += 1
        starts = self.tick_starts.get(j - i, [])
        pos = bisect_right(starts, i)
        if pos >= len(starts):
            self.buf.append(s[i:j])
            return j
        close = starts[pos]
        body = s[j:close]
        if len(body) > 2 and body[0] == " " and body[-1] == " " and body.strip(" "):
            body = body[1:-1]
        self.emit(_Code(body))
        return close + (j - i)

    def bracket(self, i: int) -> int:
        s = self.s
        bang = s[i] == "!"
        opening = i + 1 if bang else i
        close = self.brackets.get(opening)
        if close is not None and close + 1 < len(s) and s[close + 1] == "(":
            dest = _destination(s, close + 2)
            if dest is not None:
                self.link(s[opening + 1 : close], dest[0])
                return dest[1]
        self.buf.append(s[i : opening + 1])
        return opening + 1

    def delimiter_run(self, i: int) -> int:
        """A run of ``*``, ``_`` or ``~`` starting at ``i`` (``~~`` only: one or three tildes
        are text); the position after it."""
        s, ch = self.s, self.s[i]
        j = i
        while j < len(s) and s[j] == ch:
            j += 1
        if ch == "~" and j - i != 2:
            self.buf.append(s[i:j])
        else:
            before = s[i - 1] if i > 0 else " "
            after = s[j] if j < len(s) else " "
            self.emit(_delim(ch, j - i, before, after))
        return j

    def autolink(self, i: int) -> int:
        """``<scheme:…>`` or ``<address@host>`` at ``i`` as a link; the position after it, or
        ``i`` when there is none."""
        m = _AUTOLINK.match(self.s, i) or _EMAIL_AUTOLINK.match(self.s, i)
        if m is None:
            return i
        url = m.group(1)
        self.link(url, url if ":" in url else f"mailto:{url}", literal=True)
        return m.end()

    def run(self) -> list[_Node]:
        s, n, i = self.s, len(self.s), 0
        while i < n:
            i = self.syntax(i) if s[i] in _MAY_START else self.plain(i)
        self.flush()
        return self.nodes

    def plain(self, i: int) -> int:
        """Text up to the next character that may start syntax, in one slice."""
        found = _NEXT_SYNTAX.search(self.s, i + 1)
        end = len(self.s) if found is None else found.start()
        self.buf.append(self.s[i:end])
        return end

    def syntax(self, i: int) -> int:
        """The construct a syntax character at ``i`` starts (or the character as text); the
        position after it."""
        s, n, ch = self.s, len(self.s), self.s[i]
        if ch == "\\" and i + 1 < n and s[i + 1] in _ASCII_PUNCT:
            self.buf.append(s[i + 1])
            return i + 2
        if ch == "`":
            return self.code_span(i)
        if ch in "*_~":
            return self.delimiter_run(i)
        if self.links and (ch == "[" or (ch == "!" and s.startswith("[", i + 1))):
            return self.bracket(i)
        if ch == "<" and (end := self.autolink(i)) > i:
            return end
        if ch in "hH" and (end := _bare_url(s, i)) > i:
            self.buf.append(s[i:end])
            return end
        self.buf.append(ch)
        return i + 1


def _compatible(opener: _Delim, closer: _Delim) -> bool:
    """CommonMark "rule of 3" for runs that can both open and close."""
    if opener.char == "~":
        return True
    if (opener.can_close or closer.can_open) and (opener.orig + closer.orig) % 3 == 0:
        return opener.orig % 3 == 0 and closer.orig % 3 == 0
    return True


def _opener_for(nodes: list[_Node], closer: _Delim, at: int, bottom: int) -> int:
    """The nearest opener before ``at`` (above ``bottom``) that ``closer`` can close; -1."""
    for j in range(at - 1, bottom, -1):
        op = nodes[j]
        if (
            isinstance(op, _Delim)
            and op.char == closer.char
            and op.can_open
            and op.count > 0
            and _compatible(op, closer)
        ):
            return j
    return -1


def _process_emphasis(nodes: list[_Node]) -> list[_Node]:
    """Pair delimiter runs into nested groups, left to right, nearest opener first."""
    bottoms: dict[tuple[str, bool, int], int] = {}
    i = 0
    while i < len(nodes):
        closer = nodes[i]
        if not (isinstance(closer, _Delim) and closer.can_close and closer.count > 0):
            i += 1
            continue
        key = (closer.char, closer.can_open, closer.orig % 3)
        found = _opener_for(nodes, closer, i, bottoms.get(key, -1))
        if found < 0:
            bottoms[key] = i - 1
            i += 1
            continue
        opener = nodes[found]
        assert isinstance(opener, _Delim)
        use = 2 if opener.count >= 2 and closer.count >= 2 else 1
        kind = "s" if closer.char == "~" else ("b" if use == 2 else "i")
        opener.count -= use
        closer.count -= use
        nodes[found + 1 : i] = [_Group(kind, nodes[found + 1 : i])]
        for k, bottom in bottoms.items():
            if bottom > found:
                bottoms[k] = found + 1
        i = found + 2 + (1 if closer.count == 0 else 0)
    return nodes


def parse_nodes(s: str, *, links: bool = True, counter: list[int] | None = None) -> list[_Node]:
    """Tokenize and pair emphasis for one line of markdown."""
    return _process_emphasis(_Tokenizer(s, links, counter or [0]).run())


@dataclass
class _Flattener:
    runs: list[Run] = field(default_factory=list)

    def add(self, run: Run) -> None:
        if not run.text:
            return
        last = self.runs[-1] if self.runs else None
        if last and (last.styles, last.code, last.link) == (run.styles, run.code, run.link):
            self.runs[-1] = Run(last.text + run.text, run.styles, run.code, run.link)
        else:
            self.runs.append(run)


def parse_inline(line: str, base: frozenset[str] = frozenset()) -> list[Run]:
    """Flat styled runs of one markdown line; `base` styles apply to all (e.g. headings)."""
    out = _Flattener()
    stack: list[tuple[list[_Node], int, frozenset[str], LinkTarget | None]] = [
        (parse_nodes(line), 0, base, None)
    ]
    while stack:
        nodes, index, styles, link = stack.pop()
        if index >= len(nodes):
            continue
        stack.append((nodes, index + 1, styles, link))
        node = nodes[index]
        if isinstance(node, str):
            out.add(Run(node, styles, False, link))
        elif isinstance(node, _Code):
            out.add(Run(node.text, styles, True, link))
        elif isinstance(node, _Delim):
            out.add(Run(node.char * node.count, styles, False, link))
        elif node.kind == "a":
            stack.append((node.children, 0, styles, node.link))
        else:
            stack.append((node.children, 0, styles | {node.kind}, link))
    return out.runs
