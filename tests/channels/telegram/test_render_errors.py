"""Unit tests: our markdown as Telegram HTML chunks, and PTB exceptions as SendErrorKinds."""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Callable
from html.parser import HTMLParser

import pytest
from telegram import InlineKeyboardMarkup
from telegram import error as tg

from chatgate.channels.telegram.errors import classify, is_not_modified, is_parse_error
from chatgate.channels.telegram.render import BUTTONS_ONLY_TEXT, MAX_TEXT, render
from chatgate.model.outbound import Button, Buttons, OutboundMessage, Text
from chatgate.model.reasons import SendErrorKind
from chatgate.presentation.chunking import utf16_len

# Tags the Bot API accepts in parse_mode=HTML (the subset our renderer may emit).
ALLOWED_TAGS = {"b", "i", "s", "u", "code", "pre", "a"}


class _TagChecker(HTMLParser):
    """Collects tag balance problems and the visible text, as Telegram would parse it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.visible: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"unsupported <{tag}>")
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"unbalanced </{tag}> with open {self.stack}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.visible.append(data)


def check_html(text: str) -> str:
    """Assert `text` is balanced Telegram HTML; return the text a user sees."""
    checker = _TagChecker()
    checker.feed(text)
    checker.close()
    assert checker.problems == []
    assert checker.stack == [], f"unclosed tags {checker.stack}"
    return "".join(checker.visible)


def one(message: OutboundMessage) -> str:
    [chunk] = render(message)
    assert chunk.format == "HTML"
    return chunk.text


# -- HTML and escaping ------------------------------------------------------------------------


def test_special_characters_are_escaped() -> None:
    assert one(OutboundMessage.from_text("a < b & c > d")) == "a &lt; b &amp; c &gt; d"


def test_inline_styles_become_tags() -> None:
    text = one(OutboundMessage.from_text("**bold** and _it_ and `x<y`"))
    assert text == "<b>bold</b> and <i>it</i> and <code>x&lt;y</code>"


def test_code_block_keeps_its_language_and_escapes_content() -> None:
    md = "Try:\n\n```python\nif a < b and c > d:\n    print('<&>')\n```"
    text = one(OutboundMessage.from_text(md))
    assert text == (
        "Try:\n\n"
        '<pre><code class="language-python">if a &lt; b and c &gt; d:\n'
        "    print('&lt;&amp;&gt;')</code></pre>"
    )
    assert check_html(text).endswith("print('<&>')")


def test_markup_inside_code_is_literal() -> None:
    text = one(OutboundMessage.from_text("```\n**not bold** <b>\n```"))
    assert text == "<pre>**not bold** &lt;b&gt;</pre>"


def test_link_href_is_escaped_and_unsafe_schemes_dropped() -> None:
    md = '[docs](https://x.test/?a=1&b="2") [bad](javascript:alert(1))'
    text = one(OutboundMessage.from_text(md))
    assert text == '<a href="https://x.test/?a=1&amp;b=%222%22">docs</a> bad (javascript:alert(1))'
    check_html(text)


def test_plain_fallback_has_no_markup() -> None:
    [chunk] = render(OutboundMessage.from_text("**a** < `b`"))
    assert chunk.native["plain"] == "a < b"


# -- chunking -----------------------------------------------------------------------------------


def _long_answer() -> tuple[str, list[str]]:
    """~10,000 characters: emoji-heavy prose around a code block longer than one message."""
    prose = " ".join(f"Paragraph {n} 🎉 has emoji 🚀 & <angles>." for n in range(6))
    code_lines = [f"if x{n} < y{n}:  # 🐍 {n:04d}" for n in range(200)]
    parts = [prose] * 8 + ["```python\n" + "\n".join(code_lines) + "\n```"] + [prose] * 12
    text = "\n\n".join(parts)
    return text[:10_000].rsplit("\n\n", 1)[0] if len(text) > 10_000 else text, code_lines


def test_long_answer_chunks_fit_in_utf16_units_with_balanced_code_blocks() -> None:
    text, code_lines = _long_answer()
    assert 9_000 <= len(text) <= 10_000
    assert utf16_len(text) > len(text)  # emoji count twice: a code-point count would overflow
    chunks = render(OutboundMessage.from_text(text))
    assert len(chunks) >= 3
    seen = []
    with_code = 0
    for chunk in chunks:
        visible = check_html(chunk.text)  # every chunk's <pre> is closed within the chunk
        assert utf16_len(visible) <= MAX_TEXT
        assert utf16_len(chunk.native["plain"]) <= MAX_TEXT
        if "<pre>" in chunk.text:
            with_code += 1
            assert chunk.text.count("<pre>") == chunk.text.count("</pre>")
        seen.append(visible)
    assert with_code >= 2  # the code block really was split across messages
    joined = "\n".join(seen)
    positions = [joined.find(line) for line in code_lines]
    assert all(p >= 0 for p in positions), "a code line was lost"
    assert positions == sorted(positions)


def test_chunks_count_emoji_as_two_units() -> None:
    text = "🚀" * 3000  # 3000 code points, 6000 UTF-16 units: must not fit in one message
    chunks = render(OutboundMessage.from_text(text))
    assert len(chunks) == 2
    assert all(utf16_len(check_html(c.text)) <= MAX_TEXT for c in chunks)
    assert "".join(html.unescape(c.text) for c in chunks) == text


# -- buttons -----------------------------------------------------------------------------------


def test_buttons_ride_on_the_last_chunk_only() -> None:
    long_text = "\n\n".join(f"Point {n}: " + "detail " * 60 for n in range(20))
    buttons = Buttons(
        (Button("Yes", "yes"), Button("No", "no"), Button("Docs", url="https://d.test"))
    )
    chunks = render(OutboundMessage((Text(long_text), buttons)))
    assert len(chunks) >= 2
    assert [c.native["reply_markup"] is None for c in chunks] == [True] * (len(chunks) - 1) + [
        False
    ]
    markup = chunks[-1].native["reply_markup"]
    assert isinstance(markup, InlineKeyboardMarkup)
    flat = [b for row in markup.inline_keyboard for b in row]
    assert [(b.text, b.callback_data, b.url) for b in flat] == [
        ("Yes", "yes", None),
        ("No", "no", None),
        ("Docs", None, "https://d.test"),
    ]


def test_buttons_only_message_gets_a_prompt() -> None:
    [chunk] = render(OutboundMessage((Buttons((Button("Go", "go"),)),)))
    assert chunk.text == BUTTONS_ONLY_TEXT
    assert chunk.native["reply_markup"] is not None


def test_empty_message_renders_nothing() -> None:
    """No content and no buttons: nothing to send, not a "choose an option" prompt."""
    assert render(OutboundMessage(())) == []
    assert render(OutboundMessage.from_text("  \n ")) == []


def test_label_used_as_callback_data_is_shortened_to_64_bytes() -> None:
    label = "Deploy the release candidate to every production region right now"
    assert len(label.encode()) > 64
    message = OutboundMessage((Buttons((Button("ok"), Button(label))),))
    [chunk] = render(message, shorten=lambda value: f"ref:{len(value)}")
    short, long = [b for row in chunk.native["reply_markup"].inline_keyboard for b in row]
    assert (short.callback_data, long.callback_data) == ("ok", f"ref:{len(label)}")
    [default] = render(message)  # without a store: a stable hash that still fits
    data = default.native["reply_markup"].inline_keyboard[-1][-1].callback_data
    assert isinstance(data, str) and len(data.encode()) <= 64


def test_wide_button_rows_wrap() -> None:
    labels = [f"Option number {n}" for n in range(5)]
    [chunk] = render(OutboundMessage((Text("Pick"), Buttons(tuple(Button(x, x) for x in labels)))))
    rows = chunk.native["reply_markup"].inline_keyboard
    assert len(rows) > 1
    assert [b.text for row in rows for b in row] == labels


# -- error mapping -----------------------------------------------------------------------------

_CASES: list[tuple[str, Callable[[], BaseException], SendErrorKind]] = [
    ("RetryAfter", lambda: tg.RetryAfter(dt.timedelta(seconds=7)), SendErrorKind.RATE_LIMITED),
    (
        "Forbidden",
        lambda: tg.Forbidden("Forbidden: bot was blocked by the user"),
        SendErrorKind.FORBIDDEN,
    ),
    ("BadRequest-chat", lambda: tg.BadRequest("Chat not found"), SendErrorKind.TARGET_NOT_FOUND),
    (
        "BadRequest-user",
        lambda: tg.BadRequest("Bad Request: user not found"),
        SendErrorKind.TARGET_NOT_FOUND,
    ),
    (
        "BadRequest-deleted",
        lambda: tg.BadRequest("Bad Request: group chat was deleted"),
        SendErrorKind.TARGET_NOT_FOUND,
    ),
    (
        "BadRequest-empty",
        lambda: tg.BadRequest("Bad Request: message text is empty"),
        SendErrorKind.INVALID_REQUEST,
    ),
    (
        "BadRequest-parse",
        lambda: tg.BadRequest("Bad Request: can't parse entities"),
        SendErrorKind.INVALID_REQUEST,
    ),
    ("InvalidToken", lambda: tg.InvalidToken(), SendErrorKind.AUTH_FATAL),
    ("InvalidToken-msg", lambda: tg.InvalidToken("Unauthorized"), SendErrorKind.AUTH_FATAL),
    ("TimedOut", lambda: tg.TimedOut(), SendErrorKind.TRANSIENT),
    (
        "NetworkError",
        lambda: tg.NetworkError("httpx.ConnectError: refused"),
        SendErrorKind.TRANSIENT,
    ),
    ("OSError", lambda: ConnectionResetError("peer reset"), SendErrorKind.TRANSIENT),
    (
        "Conflict",
        lambda: tg.Conflict("Conflict: terminated by other getUpdates"),
        SendErrorKind.INVALID_REQUEST,
    ),
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning:telegram.*")
@pytest.mark.parametrize(("make", "kind"), [c[1:] for c in _CASES], ids=[c[0] for c in _CASES])
def test_ptb_exceptions_map_to_send_error_kinds(
    make: Callable[[], BaseException], kind: SendErrorKind
) -> None:
    result = classify(make())
    assert not result.ok
    assert result.kind is kind


def test_subclasses_win_over_their_parents() -> None:
    """BadRequest and TimedOut are NetworkErrors; only the plain parent means transient."""
    assert issubclass(tg.BadRequest, tg.NetworkError) and issubclass(tg.TimedOut, tg.NetworkError)
    assert (
        classify(tg.BadRequest("Bad Request: wrong file id")).kind is SendErrorKind.INVALID_REQUEST
    )
    assert classify(tg.TimedOut()).kind is SendErrorKind.TRANSIENT
    assert classify(tg.NetworkError("boom")).kind is SendErrorKind.TRANSIENT


@pytest.mark.filterwarnings("ignore::DeprecationWarning:telegram.*")
def test_retry_after_carries_the_seconds() -> None:
    assert classify(tg.RetryAfter(dt.timedelta(seconds=7))).retry_after_s == 7.0
    assert classify(tg.RetryAfter(3)).retry_after_s == 3.0  # PTB 22 builds it from the wire int


def test_parse_and_not_modified_errors_are_recognised() -> None:
    assert is_parse_error(tg.BadRequest("Bad Request: can't parse entities: unclosed tag"))
    assert not is_parse_error(tg.BadRequest("Bad Request: chat not found"))
    assert not is_parse_error(tg.Forbidden("can't parse entities"))  # only a BadRequest counts
    assert is_not_modified(tg.BadRequest("Bad Request: message is not modified"))
    assert not is_not_modified(tg.BadRequest("Bad Request: message to edit not found"))
