"""Test helpers: a Telegram HTML validator and fence counting for chunk checks."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_ALLOWED = {"b", "i", "s", "code", "pre", "a"}
_ENTITIES = {"amp", "lt", "gt", "quot"}
_KNOWN_TAG = re.compile(
    r'</?(?:b|i|s|code|pre)>|<a href="[^"<>]*">|</a>|<code class="language-[A-Za-z0-9_+#.\-]+">'
)


class _TelegramHTMLChecker(HTMLParser):
    """Records every way a string would be rejected by Telegram's HTML parse mode."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        parent = self.stack[-1] if self.stack else None
        if tag not in _ALLOWED:
            self.errors.append(f"tag <{tag}> not allowed")
        if parent == "code":
            self.errors.append(f"<{tag}> inside <code>")
        if "pre" in self.stack and not (tag == "code" and parent == "pre"):
            self.errors.append(f"<{tag}> inside <pre>")
        if tag == "pre" and self.stack:
            self.errors.append("<pre> must be top level")
        if tag == "code" and parent not in (None, "pre"):
            self.errors.append(f"<code> inside <{parent}>")
        if tag == "a" and "a" in self.stack:
            self.errors.append("nested <a>")
        expected = {"a": ["href"], "code": ["class"] if parent == "pre" else []}.get(tag, [])
        names = [name for name, _ in attrs]
        if tag == "code" and parent == "pre":
            names = names or ["class"]
        if names != expected or any(not value for _, value in attrs):
            self.errors.append(f"bad attributes on <{tag}>: {attrs}")
        self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.errors.append(f"self-closing <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> does not close {self.stack[-1:] or 'anything'}")
        else:
            self.stack.pop()

    def handle_entityref(self, name: str) -> None:
        if name not in _ENTITIES:
            self.errors.append(f"entity &{name}; not supported")

    def handle_data(self, data: str) -> None:
        if any(ch in data for ch in "<>&"):
            self.errors.append(f"unescaped markup character in {data!r}")

    def handle_comment(self, data: str) -> None:
        self.errors.append("comment")

    def handle_decl(self, decl: str) -> None:
        self.errors.append("declaration")

    def handle_pi(self, data: str) -> None:
        self.errors.append("processing instruction")


def telegram_html_errors(html: str) -> list[str]:
    """Everything wrong with `html` for Telegram; [] when it is valid."""
    checker = _TelegramHTMLChecker()
    checker.feed(html)
    checker.close()
    errors = list(checker.errors)
    if checker.stack:
        errors.append(f"unclosed tags {checker.stack}")
    leftover = _KNOWN_TAG.sub("", html)
    if "<" in leftover or ">" in leftover:
        errors.append("a '<' or '>' outside a known tag")
    if re.search(r"&(?!(?:amp|lt|gt|quot);)", html):
        errors.append("a bare '&'")
    return errors


def fence_lines(chunk: str) -> list[str]:
    """Lines of a chunk that open or close a ``` fence (simple test dialect: no ~~~)."""
    return [line for line in chunk.split("\n") if line.lstrip().startswith("```")]


def fences_balanced(chunk: str) -> bool:
    """Whether every ``` opened in the chunk is closed again."""
    open_fence = False
    for line in fence_lines(chunk):
        stripped = line.strip()
        if not open_fence:
            open_fence = True
        elif set(stripped) == {"`"}:
            open_fence = False
    return not open_fence
