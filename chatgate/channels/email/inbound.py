"""A raw mail (RFC 5322 bytes from IMAP) read with the standard library's `email` package: the
headers decisions need, the text the model sees and the files it carries. Never raises on bad
mail: `parse` returns None and the caller records it as malformed."""

from __future__ import annotations

import codecs
import email
import email.policy
import logging
import re
from dataclasses import dataclass
from email.message import EmailMessage, Message
from email.utils import getaddresses, parseaddr
from html.parser import HTMLParser
from typing import Any

from chatgate.model.messages import AttachmentKind
from chatgate.policies.mail import MailFacts, ThreadHeaders, text_codec, trim_reply

log = logging.getLogger("chatgate.email")
_MSGID = re.compile(r"<([^<>\s]+)>")
_BARE_ID = re.compile(r"[^<>\s]+")  # an id a client wrote without brackets
_BLOCK_TAGS = frozenset(
    {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"}
)
_SKIP_TAGS = frozenset({"script", "style", "head", "title"})
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


class _LenientPolicy(email.policy.EmailPolicy):
    """The standard policy, except that a header its parser trips over (``Message-ID: <>``
    raises inside the library) reads as its raw text instead of failing the whole mail."""

    def header_fetch_parse(self, name: str, value: str) -> Any:
        try:
            return super().header_fetch_parse(name, value)
        except Exception:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


LENIENT = _LenientPolicy()


@dataclass(frozen=True)
class MailPart:
    """A file a mail carries; ``index`` is its place in the mail's part walk (how it is found
    again when the media step fetches it)."""

    index: int
    name: str
    mime: str
    size: int

    @property
    def kind(self) -> str:
        major = self.mime.partition("/")[0]
        if major == "image":
            return AttachmentKind.IMAGE.value
        if major in ("audio", "video"):
            return AttachmentKind(major).value
        return AttachmentKind.DOCUMENT.value


@dataclass(frozen=True)
class ParsedMail:
    thread: ThreadHeaders
    facts: MailFacts
    sender_name: str
    subject: str
    text: str
    parts: tuple[MailPart, ...]


class _TextOfHtml(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self._skip += 1
        elif tag in _BLOCK_TAGS:
            self.out.append("\n")
        if tag == "li":
            self.out.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK_TAGS and tag not in ("li", "br"):
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.out.append(re.sub(r"[ \t\r\n]+", " ", data))


def html_to_text(html: str) -> str:
    """Readable text of an HTML body: blocks on their own lines, scripts and styles dropped."""
    parser = _TextOfHtml()
    parser.feed(html)
    parser.close()
    lines = "".join(parser.out).split("\n")
    text = "\n".join(line.strip() for line in lines)
    return _BLANK_RUNS.sub("\n\n", text).strip()


def message_ids(value: str | None) -> tuple[str, ...]:
    """The message ids in a Message-ID / In-Reply-To / References value, without brackets."""
    if not value:
        return ()
    found = _MSGID.findall(value)
    if found:
        return tuple(found)
    bare = value.strip()
    return (bare,) if _BARE_ID.fullmatch(bare) else ()


def _header(msg: Message, name: str) -> str | None:
    value = msg.get(name)
    return None if value is None else str(value)


def is_file(part: Message) -> bool:
    if part.is_multipart():
        return False
    disposition = part.get_content_disposition()
    if disposition == "attachment":
        return True
    if part.get_filename():
        return True
    return part.get_content_maintype() not in ("text", "multipart", "message")


def _known_codec(name: str) -> bool:
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):  # unknown, or not a name at all (a NUL in it)
        return False
    return bool(getattr(info, "_is_text_encoding", True))  # not base64, zlib: bytes to bytes


def part_text(part: Message) -> str:
    """A text part's content, decoded with its charset when Python knows it (or a known
    alias), else as UTF-8 with replacement: an odd charset label never loses the message."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    try:
        label = part.get_content_charset()
    except Exception:  # a charset parameter the library cannot even read (RFC 2231 junk)
        label = None
    try:
        return payload.decode(text_codec(label, _known_codec), "replace")
    except (UnicodeError, LookupError):  # a codec without "replace" (idna), or no text codec
        return payload.decode("utf-8", "replace")


def _body(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    text = part_text(part)
    if part.get_content_subtype() == "html":
        text = html_to_text(text)
    return trim_reply(text)


def _filename(part: Message) -> str | None:
    try:
        return part.get_filename()
    except Exception:  # an RFC 2231 name in a charset Python lacks: the file keeps a made-up name
        return None


def _parts(msg: Message) -> tuple[MailPart, ...]:
    found: list[MailPart] = []
    for index, part in enumerate(msg.walk()):
        if not is_file(part):
            continue
        payload = part.get_payload(decode=True)
        size = len(payload) if isinstance(payload, bytes) else 0
        mime = part.get_content_type()
        name = _filename(part) or f"attachment-{index}"
        found.append(MailPart(index, name, mime, size))
    return tuple(found)


def _facts(msg: EmailMessage) -> tuple[MailFacts, str]:
    name, sender = parseaddr(_header(msg, "From") or "")
    report = msg.get_param("report-type") if msg.get_content_type() == "multipart/report" else None
    facts = MailFacts(
        sender=sender.strip().lower(),
        return_path=_header(msg, "Return-Path"),
        auto_submitted=_header(msg, "Auto-Submitted"),
        precedence=_header(msg, "Precedence"),
        list_id=_header(msg, "List-Id"),
        content_type=msg.get_content_type(),
        report_type=report if isinstance(report, str) else None,
        authentication_results=tuple(str(v) for v in msg.get_all("Authentication-Results") or ()),
    )
    return facts, name


def parse(raw: bytes, fallback_id: str) -> ParsedMail | None:
    """The parts of ``raw`` chatgate reads; ``fallback_id`` names a mail without Message-ID."""
    try:
        msg = email.message_from_bytes(raw, policy=LENIENT)
        assert isinstance(msg, EmailMessage)
        facts, name = _facts(msg)
        own = message_ids(_header(msg, "Message-ID"))
        replied = message_ids(_header(msg, "In-Reply-To"))
        thread = ThreadHeaders(
            message_id=own[0] if own else fallback_id,
            in_reply_to=replied[0] if replied else None,
            references=message_ids(_header(msg, "References")),
        )
        return ParsedMail(
            thread=thread,
            facts=facts,
            sender_name=name,
            subject=(_header(msg, "Subject") or "").strip(),
            text=_body(msg),
            parts=_parts(msg),
        )
    except Exception as exc:  # any defect the library raises on: recorded, never a crash
        log.warning("unreadable mail skipped", extra={"error": type(exc).__name__})
        return None


def part_bytes(raw: bytes, index: int) -> tuple[bytes, str] | None:
    """The decoded bytes and type of the part at ``index`` of ``raw`` (see MailPart.index)."""
    msg = email.message_from_bytes(raw, policy=LENIENT)
    for n, part in enumerate(msg.walk()):
        if n == index:
            payload = part.get_payload(decode=True)
            return (payload, part.get_content_type()) if isinstance(payload, bytes) else None
    return None


def recipients(value: str) -> list[str]:
    return [addr.lower() for _, addr in getaddresses([value]) if addr]
