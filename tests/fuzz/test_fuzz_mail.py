"""Hostile mail: whatever the headers and body of a mail from a known sender say (charsets,
transfer encodings, multipart framing, RFC 2047 and 2231 parameters), it is read, never skipped
as unreadable, and each file it lists can be fetched again by its index."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chatgate.channels.email.inbound import parse, part_bytes
from tests.fuzz.conftest import fuzz_settings

SENDER = b"alice@example.org"
ODD = [
    b"=?x-bogus?B?aGk=?=",
    b"=?utf-8?q?=ZZ?=",
    b"=?utf-8?b?!!?=",
    b"\xff\xfe",
    b"caf\xe9",
    b"\x00",
    b'"',
    b"''",
    b"*",
    b";",
    b"x" * 300,
]
CHARSETS = [b"utf-8", b"ks_c_5601-1987", b"unknown-8bit", b"base64", b"idna", b'"utf-8\x00"', b""]
TYPES = [
    b"text/plain",
    b"text/html",
    b"multipart/mixed",
    b"multipart/alternative",
    b"message/rfc822",
]
TYPES += [b"application/pdf", b"image/png", b"multipart/report", b"x", b""]
ENCODINGS = [b"7bit", b"8bit", b"base64", b"quoted-printable", b"binary", b"x-uuencode", b"x"]


def _line() -> st.SearchStrategy[bytes]:
    text = st.binary(max_size=40).filter(lambda b: b"\r" not in b and b"\n" not in b)
    return st.sampled_from(ODD) | text


@st.composite
def content_type(draw: st.DrawFn) -> bytes:
    value = draw(st.sampled_from(TYPES))
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from([b"charset", b"boundary", b"name", b"name*", b"charset*"]))
        value += b"; " + name + b"=" + draw(st.sampled_from(CHARSETS) | _line())
    return value


@st.composite
def body(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["bytes", "parts", "text"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "text":
        return draw(st.text(max_size=100)).encode("utf-8", "surrogatepass")
    out = b""
    for _ in range(draw(st.integers(1, 3))):
        out += b"--" + draw(st.sampled_from([b"b1", b"b2", b""])) + b"\r\n"
        out += b"Content-Type: " + draw(content_type()) + b"\r\n"
        out += b"Content-Transfer-Encoding: " + draw(st.sampled_from(ENCODINGS)) + b"\r\n"
        if draw(st.booleans()):
            out += b"Content-Disposition: attachment; filename*=" + draw(_line()) + b"\r\n"
        out += b"\r\n" + draw(st.binary(max_size=80)) + b"\r\n"
    return out + draw(st.sampled_from([b"--b1--\r\n", b"--b2--", b""]))


@st.composite
def mails(draw: st.DrawFn) -> bytes:
    head = [
        # a well-formed display name: an address behind an unbalanced quote or a stray
        # bracket is ambiguous, and a sender is never guessed (allow lists and replies use it)
        b"From: "
        + draw(st.sampled_from([b"Alice", b"", b"=?x?q?A?=", b"\xc3\xa9", b"caf\xe9", b"A B"]))
        + b" <"
        + SENDER
        + b">",
        b"To: bot@example.org",
        b"Subject: " + draw(_line()),
        b"Message-ID: " + draw(st.sampled_from([b"<m1@example.org>", b"<>", b""]) | _line()),
        b"Content-Type: " + draw(content_type()),
        b"Content-Transfer-Encoding: " + draw(st.sampled_from(ENCODINGS)),
    ]
    for _ in range(draw(st.integers(0, 2))):
        name = draw(st.sampled_from([b"References", b"In-Reply-To", b"Auto-Submitted", b"X-Odd"]))
        head.append(name + b": " + draw(_line()))
    return b"\r\n".join(head) + b"\r\n\r\n" + draw(body())


@fuzz_settings("mail")
@given(raw=mails())
def test_a_mail_from_a_known_sender_is_always_read(raw: bytes) -> None:
    parsed = parse(raw, "fallback@bot")
    assert parsed is not None, raw
    assert parsed.facts.sender == SENDER.decode()
    for part in parsed.parts:
        part_bytes(raw, part.index)  # never raises: the media step fetches it this way


@fuzz_settings("mail")
@given(raw=st.binary(max_size=500))
def test_any_bytes_are_read_or_skipped_without_an_exception(raw: bytes) -> None:
    parse(raw, "fallback@bot")
