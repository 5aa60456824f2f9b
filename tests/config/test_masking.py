"""The masker hides secrets in any case, URL-quoted, and bot tokens by their shape."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import pytest

from chatgate.config.masking import REDACTED, Masker, masked, whole_text
from chatgate.config.redact import scrub
from chatgate.gateway.logs import SecretScrubber

BOT = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawX"
KEY = "sk-Live+Key/Secret=42"


@pytest.mark.parametrize(
    "text",
    [
        f"error at /bot{BOT}/getMe",
        f"error at /bot{BOT.lower()}/getme",
        f"ERROR {KEY.upper()}",
        "url https://x/?k=sk-Live%2BKey%2FSecret%3D42",
        "form k=sk-Live%2BKey%2FSecret%3D42",
        "other bot 987654321:" + "z" * 35,
        "slack said invalid_auth for xoxb-1-" + "z" * 35,
        "socket token xapp-1-A1-" + "z" * 35,
    ],
)
def test_masked(text: str) -> None:
    masked = Masker([BOT, KEY]).mask(text)
    assert REDACTED in masked
    for needle in (BOT.lower(), KEY.lower(), "sk-live%2bkey", "z" * 35):
        assert needle not in masked.lower()


def test_plain_text_is_left_alone() -> None:
    assert Masker([KEY]).mask("port 8080 ok 12345:abc") == "port 8080 ok 12345:abc"


def test_status_scrub_and_log_scrubber_share_it() -> None:
    assert scrub({"e": [f"x {BOT.lower()}"]}, frozenset()) == {"e": [f"x {REDACTED}"]}
    record = logging.LogRecord("t", logging.ERROR, "f", 1, "got %s", (KEY.lower(),), None)
    SecretScrubber([KEY]).filter(record)
    assert KEY.lower() not in record.getMessage()


@pytest.mark.parametrize(
    "text",
    [
        '{"msg":"turn","chat":"c0","session":"default:memory:c0"}',
        f"key={KEY}",
        f"key={KEY.upper()}",
        f"key={KEY.lower()}",
        "tok 123456789:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA end",
        "chat 123456: short",
        "tok 123456:" + "A" * 30,
        "tok 123456:" + "A" * 29 + " end",
        "telegram:123456789:42 slack:D100000:1765080000.000100",
        "slack XOXB-1234567890-abcdef end",
        "app token xapp-1-ABCDEFGHIJ end",
        "xox mentioned but no token",
        "quoted k=SK-LIVE%2BKEY%2FSECRET%3D42",
        f"non-ascii é {KEY}",
        "non-ascii é nothing",
        "",
        "xoxb-12345678",
        "XAPP-12345678",
        "pw=abcd",
        "ABCD",
        "abc",
        "user",
    ],
)
def test_the_quick_path_agrees_with_the_full_scan(text: str) -> None:
    masker = Masker([KEY, "sk-other-secret"])
    scrubber = SecretScrubber([KEY, "sk-other-secret"])
    assert scrubber.scrub(text) == masker.mask(text)
    assert masker.mask(text) == masker._pattern.sub(REDACTED, text)  # never skips a match


def test_a_text_too_short_for_any_form_is_not_scanned() -> None:
    """The shortest secret form (four characters here) and token (13) still match."""
    masker = Masker(["abcd"])
    assert masker.mask("ABCD") == REDACTED
    assert masker.mask("xoxb-12345678") == REDACTED
    assert masker.mask("abc") == "abc"
    assert Masker([KEY]).mask("xoxb-1234567") == "xoxb-1234567"


@pytest.mark.parametrize(
    ("text", "hinted"),
    [
        ("id 123456:" + "x" * 30, True),
        ("0123456789:" + "A" * 30, True),
        ("id 123456:x", False),
        ('{"key": "telegram:123456789:42", "chat": "slack:D100000:1765080000.000100"}', False),
        ("0123456789:" + "A" * 29 + ".", False),
        ("XAPP-1-ABCDEFGHIJ", True),
        ("xOx", True),
        ('{"a": 1, "b": "12345:6 123456"}', False),
    ],
)
def test_the_shape_hint(text: str, hinted: bool) -> None:
    """Six digits, a colon and 30 token characters, or xox / xapp in any case, send ASCII text
    to the full scan (a numeric chat id in a message key does not)."""
    assert Masker([KEY])._could_match(text) is hinted


@dataclass(frozen=True)
class _Inner:
    text: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Outer:
    title: str
    inner: _Inner
    size: int = field(init=False, default=0)


def test_nested_dataclasses_are_rebuilt_only_where_a_secret_was() -> None:
    mask = Masker(frozenset({KEY}))
    clean = _Outer("hello", _Inner("plain", ("a",)))
    assert masked(clean, mask) is clean
    dirty = _Outer("hello", _Inner("key " + KEY, ("a", KEY)))
    out = masked(dirty, mask)
    assert out == _Outer("hello", _Inner("key " + REDACTED, ("a", REDACTED)))
    assert out.title is dirty.title


class _Word(str):
    """A str subclass (as a StrEnum value is): masked like any text."""


def test_every_kind_of_value_is_walked_by_its_type() -> None:
    """Text (subclasses too), dicts, lists, tuples and dataclass objects are masked; other
    values, and a dataclass *class*, come back as they are."""
    mask = Masker(frozenset({KEY}))
    value = {"w": _Word("w " + KEY), "l": [KEY, 3, None], "t": (1.5, KEY), "c": _Inner, "b": b"k"}
    out = masked(value, mask)
    assert out == {
        "w": "w " + REDACTED,
        "l": [REDACTED, 3, None],
        "t": (1.5, REDACTED),
        "c": _Inner,
        "b": b"k",
    }
    assert type(out["t"]) is tuple and masked(value["c"], mask) is _Inner


@pytest.mark.parametrize(
    ("secret", "text", "out"),
    [
        ("abcd", "ABCD", REDACTED),  # as short as the shortest secret: still masked
        ("abcd", "abc", "abc"),
        ("a-much-longer-secret", "xoxb-12345678", REDACTED),  # the shortest token shape
        ("a-much-longer-secret", "xoxb-1234567", "xoxb-1234567"),
    ],
)
def test_texts_shorter_than_any_match_are_skipped_not_missed(
    secret: str, text: str, out: str
) -> None:
    assert Masker(frozenset({secret})).mask(text) == out


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("plain ascii", "plain ascii"),
        ("é and 😀", "é and 😀"),
        ("bad \ud800 text", "bad \ufffd text"),  # a lone high surrogate
        ("\udfff", "\ufffd"),  # a lone low one, shorter than any secret
        ("\ud83d\ude00 split pair", "😀 split pair"),  # halves decoded apart: joined
        ("\ude00\ud83d", "\ufffd\ufffd"),  # in the wrong order: two lone ones
    ],
)
def test_whole_text(text: str, whole: str) -> None:
    assert whole_text(text) == whole
    assert Masker({"sekrit-value"}).mask(text) == whole
    whole.encode("utf-8")  # what every store, log and platform needs


def test_a_lone_surrogate_beside_a_secret_is_made_whole_and_the_secret_masked() -> None:
    assert Masker({"sekrit-value"}).mask("k=sekrit-value \ud800") == f"k={REDACTED} \ufffd"
