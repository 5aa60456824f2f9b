"""Markdown dialect conversion: plain text, Telegram HTML and Slack mrkdwn on tricky inputs."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatgate.channels.slack.markdown import _to_slack_mrkdwn, markdown_to_slack_mrkdwn
from chatgate.presentation.markdown import (
    Fence,
    _to_html,
    _to_plain,
    closes_fence,
    markdown_to_html,
    markdown_to_plain,
    parse_fence,
)
from tests.presentation.helpers import telegram_html_errors

# (markdown, plain, telegram html, slack mrkdwn)
CASES = [
    (
        "**bold** and *it* and _it_ and ~~gone~~",
        "bold and it and it and gone",
        "<b>bold</b> and <i>it</i> and <i>it</i> and <s>gone</s>",
        "*bold* and _it_ and _it_ and ~gone~",
    ),
    ("snake_case_name and a_b_", "snake_case_name and a_b_", None, None),
    (
        "a < b && c > d",
        "a < b && c > d",
        "a &lt; b &amp;&amp; c &gt; d",
        "a &lt; b &amp;&amp; c &gt; d",
    ),
    ("2 * 3 * 4", "2 * 3 * 4", "2 * 3 * 4", "2 * 3 * 4"),
    ("unbalanced **bold and *it", "unbalanced **bold and *it", None, None),
    ("x ** y **", "x ** y **", None, None),
    ("`unclosed code", "`unclosed code", None, None),
    ("**unclosed", "**unclosed", None, None),
    ("\\*not italic\\*", "*not italic*", "*not italic*", "*not italic*"),
    ("*a*b", "ab", "<i>a</i>b", "_a_b"),
    ("_a_b", "_a_b", "_a_b", "_a_b"),
    ("~single~ ~~~triple~~~", "~single~ ~~~triple~~~", None, None),
    (
        "***both*** and **a *b* c**",
        "both and a b c",
        "<b><i>both</i></b> and <b>a <i>b</i> c</b>",
        "*_both_* and *a* *_b_* *c*",
    ),
    ("*a **b** c*", "a b c", "<i>a <b>b</b> c</i>", "_a_ *_b_* _c_"),
    ("_under *star_ mix*", "under *star mix*", "<i>under *star</i> mix*", None),
    ("# Title", "Title", "<b>Title</b>", "*Title*"),
    ("## Heading ##", "Heading", "<b>Heading</b>", "*Heading*"),
    ("#hashtag", "#hashtag", "#hashtag", "#hashtag"),
    (
        "# The `x` thing",
        "The x thing",
        "<b>The </b><code>x</code><b> thing</b>",
        "*The* `x` *thing*",
    ),
    (
        "Use `a<b>` here",
        "Use a<b> here",
        "Use <code>a&lt;b&gt;</code> here",
        "Use `a&lt;b&gt;` here",
    ),
    ("`code **not bold**`", "code **not bold**", "<code>code **not bold**</code>", None),
    ("``a`b``", "a`b", "<code>a`b</code>", "a`b"),
    ("**a `c` b**", "a c b", "<b>a </b><code>c</code><b> b</b>", "*a* `c` *b*"),
    (
        "- item **x**\n  * nested\n1. one\n+ plus",
        "- item x\n  * nested\n1. one\n+ plus",
        "• item <b>x</b>\n  • nested\n1. one\n• plus",
        "• item *x*\n  • nested\n1. one\n• plus",
    ),
    ("> quote *x*", "> quote x", "&gt; quote <i>x</i>", "&gt; quote _x_"),
    ("---\n***", "---\n***", "---\n***", "---\n***"),
    (
        "[link](https://e.com/a_(b)) done",
        "link (https://e.com/a_(b)) done",
        '<a href="https://e.com/a_(b)">link</a> done',
        "<https://e.com/a_(b)|link> done",
    ),
    (
        '[t](https://a.com "title")',
        "t (https://a.com)",
        '<a href="https://a.com">t</a>',
        "<https://a.com|t>",
    ),
    (
        "[a [nested] b](https://x)",
        "a [nested] b (https://x)",
        '<a href="https://x">a [nested] b</a>',
        "<https://x|a [nested] b>",
    ),
    ("[no url] [x]() [y]", "[no url] [x]() [y]", None, None),
    ("[](https://x)", "https://x", '<a href="https://x">https://x</a>', "<https://x>"),
    (
        '[q](https://a.com/?q="x"&y=1)',
        'q (https://a.com/?q="x"&y=1)',
        '<a href="https://a.com/?q=%22x%22&amp;y=1">q</a>',
        "<https://a.com/?q=%22x%22&amp;y=1|q>",
    ),
    (
        "[bad](javascript:alert(1))",
        "bad (javascript:alert(1))",
        "bad (javascript:alert(1))",
        "bad (javascript:alert(1))",
    ),
    (
        "**[bold link](https://x)**",
        "bold link (https://x)",
        '<a href="https://x"><b>bold link</b></a>',
        "<https://x|bold link>",
    ),
    (
        "[`c` in link](https://x)",
        "c in link (https://x)",
        '<a href="https://x">c in link</a>',
        None,
    ),
    (
        "![a cat](https://i/c.png)",
        "a cat (https://i/c.png)",
        '<a href="https://i/c.png">a cat</a>',
        None,
    ),
    (
        "<https://x.y> and <me@x.co>",
        "https://x.y and me@x.co",
        '<a href="https://x.y">https://x.y</a> and <a href="mailto:me@x.co">me@x.co</a>',
        "<https://x.y> and <mailto:me@x.co|me@x.co>",
    ),
    (
        "https://x.com/_a_/b_c and http://y.org/*x*.",
        "https://x.com/_a_/b_c and http://y.org/*x*.",
        "https://x.com/_a_/b_c and http://y.org/*x*.",
        None,
    ),
    ("**see https://x.com/a_b**", "see https://x.com/a_b", "<b>see https://x.com/a_b</b>", None),
    (
        "<script>alert(1)</script> &amp;",
        "<script>alert(1)</script> &amp;",
        "&lt;script&gt;alert(1)&lt;/script&gt; &amp;amp;",
        "&lt;script&gt;alert(1)&lt;/script&gt; &amp;amp;",
    ),
    ("emoji 😀 **bold 😀**", "emoji 😀 bold 😀", "emoji 😀 <b>bold 😀</b>", "emoji 😀 *bold 😀*"),
    ("a\r\nb", "a\nb", "a\nb", "a\nb"),
    (
        "Run:\n```python\nif a < b:\n    print('*x*')\n```\nDone",
        "Run:\nif a < b:\n    print('*x*')\nDone",
        "Run:\n<pre><code class=\"language-python\">if a &lt; b:\n    print('*x*')</code></pre>\nDone",
        "Run:\n```\nif a &lt; b:\n    print('*x*')\n```\nDone",
    ),
    (
        "```\nunclosed <x>",
        "unclosed <x>",
        "<pre>unclosed &lt;x&gt;</pre>",
        "```\nunclosed &lt;x&gt;\n```",
    ),
    ("~~~\ntilde\n~~~", "tilde", "<pre>tilde</pre>", None),
    ("````\n```\ninner\n```\n````", "```\ninner\n```", "<pre>```\ninner\n```</pre>", None),
    (
        "1. step\n   ```sh\n   ls -l\n   ```",
        "1. step\nls -l",
        '1. step\n<pre><code class="language-sh">ls -l</code></pre>',
        None,
    ),
    ('```bad"lang\nx\n```', "x", "<pre>x</pre>", None),
    ("```\n```\nafter", "\nafter", "\nafter", "\nafter"),
]


@pytest.mark.parametrize(("md", "plain", "html", "slack"), CASES, ids=[c[0][:30] for c in CASES])
def test_conversions(md: str, plain: str, html: str | None, slack: str | None) -> None:
    assert markdown_to_plain(md) == plain
    rendered = markdown_to_html(md)
    assert telegram_html_errors(rendered) == []
    if html is not None:
        assert rendered == html
    if slack is not None:
        assert markdown_to_slack_mrkdwn(md) == slack


def test_plain_text_without_markup_is_unchanged() -> None:
    text = "Totals: 3 < 4, a_b_c, 5 * 6 = 30\n\n  indented line\n- list"
    assert markdown_to_plain(text) == text


def test_fence_helpers() -> None:
    fence = parse_fence("  ```python title")
    assert fence == Fence("  ", "```", "python title")
    assert fence.lang == "python" and fence.opening() == "  ```python title"
    assert fence.closing() == "  ```"
    assert parse_fence("```a`b") is None and parse_fence("``x") is None
    assert closes_fence("````", fence) and closes_fence(" ``` ", fence)
    assert not closes_fence("``", fence) and not closes_fence("~~~", fence)
    assert not closes_fence("```x", fence)


_MD_ALPHABET = st.sampled_from([*"*_~`[]()<>&#->!\\ \n\t\"'|.:/ab1😀é", "http://", "```"])
_markdownish = st.lists(_MD_ALPHABET, max_size=60).map("".join)


# The converters' safety nets hide exceptions; the unguarded cores must not need them.


@given(st.one_of(_markdownish, st.text(max_size=80)))
def test_telegram_html_is_always_valid(md: str) -> None:
    html = _to_html(md)
    assert telegram_html_errors(html) == []
    assert markdown_to_html(md) == html


@given(st.one_of(_markdownish, st.text(max_size=80)))
def test_slack_and_plain_never_raise(md: str) -> None:
    slack = _to_slack_mrkdwn(md)
    plain = _to_plain(md)
    assert not re.search(r"[<>]", re.sub(r"<(?:https?|mailto|tg):[^<>]*>", "", slack))
    assert plain.count("\n") <= md.replace("\r\n", "\n").count("\n")
    assert (slack, plain) == (markdown_to_slack_mrkdwn(md), markdown_to_plain(md))


_NO_FENCES = (
    st.lists(st.sampled_from([*"*_~[]()<>#->!\\ \n\"'|.:/ab1😀é", "https://x.io/"]), max_size=60)
    .map("".join)
    .filter(lambda s: "~~~" not in s)
)  # "~~~a" opens a tilde fence (info "a")


def _alnum(text: str) -> str:
    return "".join(ch for ch in text if ch.isalnum())


@given(_NO_FENCES)
def test_plain_keeps_every_letter_in_order(md: str) -> None:
    assert _alnum(_to_plain(md)) == _alnum(md)


def test_pathological_input_stays_valid() -> None:
    md = "*a " * 3000 + "[" * 2000 + "`" * 999 + "_b" * 3000 + "](" * 500 + "[a](" * 2000
    html = markdown_to_html(md)
    assert telegram_html_errors(html) == []
    nested = "*a " * 500 + "b" + " c*" * 500
    assert "<i>" in markdown_to_html(nested)
