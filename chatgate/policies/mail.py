"""Pure decisions about email: which mail is automated (RFC 3834), which is authenticated by the
operator's own MTA, how a thread is found and how a reply is titled, what of a body the model
needs. No parsing of bytes here: the channel hands in the header values it read."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chatgate.model.reasons import DropReason

_BULK_PRECEDENCE = frozenset({"bulk", "list", "junk"})
_ROBOT_LOCALS = frozenset({"mailer-daemon", "postmaster"})
_REPLY_PREFIX = re.compile(r"^\s*((re|aw|sv|vs|antw|ref|fwd?|wg)\s*(\[\d+\])?\s*:\s*)+", re.I)
_SPACES = re.compile(r"\s+")
_QUOTE_INTRO = re.compile(
    r"^(on .{4,200} wrote:|am .{4,200} schrieb .{1,200}:|le .{4,200} a écrit\s?:|"
    r"-----\s*original message\s*-----|from:\s.+)$",
    re.I,
)
_METHOD_RESULT = re.compile(r"\b(dkim|spf|dmarc)\s*=\s*([a-z]+)", re.I)
AUTH_METHODS = frozenset({"dkim", "spf", "dmarc"})


@dataclass(frozen=True)
class MailFacts:
    """The header values a decision about one mail reads (lower-cased addresses)."""

    sender: str
    return_path: str | None = None  # None: no Return-Path header; "": the null path <>
    auto_submitted: str | None = None
    precedence: str | None = None
    list_id: str | None = None
    content_type: str = "text/plain"
    report_type: str | None = None
    authentication_results: tuple[str, ...] = ()


def automated_reason(facts: MailFacts, own_address: str) -> DropReason | None:
    """Why this mail must get no answer: it is the bot's own, or a machine's (an auto-reply, a
    bounce, list or bulk mail); None for a person's mail."""
    if facts.sender == own_address.lower():
        return DropReason.SELF_MESSAGE
    auto = (facts.auto_submitted or "no").strip().lower()
    if auto.split(";")[0].strip() != "no":
        return DropReason.AUTOMATED_MAIL
    if (facts.precedence or "").strip().lower() in _BULK_PRECEDENCE or facts.list_id:
        return DropReason.AUTOMATED_MAIL
    if facts.return_path is not None and facts.return_path.strip("<> ") == "":
        return DropReason.AUTOMATED_MAIL
    if facts.sender.partition("@")[0] in _ROBOT_LOCALS or not facts.sender:
        return DropReason.AUTOMATED_MAIL
    if facts.content_type.lower() == "multipart/report":
        return DropReason.AUTOMATED_MAIL
    return None


def authenticated(results: Sequence[str], authserv_id: str | None) -> bool:
    """Whether an Authentication-Results header of the operator's own MTA (``authserv_id``,
    when set; any otherwise) says dkim, spf or dmarc passed. A header another server added is
    forgeable and is ignored when ``authserv_id`` is set."""
    for header in results:
        server, _, rest = header.partition(";")
        server_id = server.strip().split()[0].lower() if server.strip() else ""
        if authserv_id and server_id != authserv_id.lower():
            continue
        for method, verdict in _METHOD_RESULT.findall(rest):
            if method.lower() in AUTH_METHODS and verdict.lower() == "pass":
                return True
    return False


def thread_subject(subject: str) -> str:
    """A subject without reply/forward prefixes and with folded spaces, lower-cased: the key of
    the subject fallback for clients that drop threading headers."""
    return _SPACES.sub(" ", _REPLY_PREFIX.sub("", subject)).strip().lower()


def is_reply_subject(subject: str) -> bool:
    return bool(_REPLY_PREFIX.match(subject))


def reply_subject(subject: str) -> str:
    """``Re: <subject>`` once, whatever prefixes the subject carried (never "Re: Re:")."""
    bare = _SPACES.sub(" ", _REPLY_PREFIX.sub("", subject)).strip()
    return f"Re: {bare}" if bare else "Re:"


@dataclass(frozen=True)
class ThreadHeaders:
    """A mail's own threading headers (message ids without angle brackets)."""

    message_id: str
    in_reply_to: str | None = None
    references: tuple[str, ...] = ()


def thread_root(headers: ThreadHeaders, known_root: str | None) -> str:
    """The message id that names this mail's thread: the first of its References, else the
    root already known for what it answers (``known_root``, looked up by the caller), else
    what it answers, else the mail itself (a new thread)."""
    if headers.references:
        return headers.references[0]
    if known_root:
        return known_root
    return headers.in_reply_to or headers.message_id


def reply_references(references: Sequence[str], answered: str, keep: int = 20) -> tuple[str, ...]:
    """The References of an answer to ``answered``: its own References plus itself, the first
    (the root) always kept when long threads are shortened (RFC 5322 §3.6.4)."""
    chain = [r for r in references if r != answered] + [answered]
    if len(chain) > keep:
        chain = [chain[0], *chain[-(keep - 1) :]]
    return tuple(chain)


def trim_reply(text: str) -> str:
    """The new part of a reply: quoted history (``>`` lines and what follows an "On … wrote:"
    line) and the signature (after ``-- ``) cut; the thread's history is in the session."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if line.rstrip("\n") in ("-- ", "--") or _QUOTE_INTRO.match(stripped):
            break
        if stripped.startswith(">"):
            continue
        kept.append(line)
    trimmed = "\n".join(kept).strip()
    return trimmed or text.strip()


# Charset labels mail clients send that Python's codecs do not know, and what they mean.
_CHARSET_ALIASES = {
    "ks_c_5601-1987": "cp949",  # Outlook's label for Korean
    "ks_c_5601": "cp949",
    "x-sjis": "shift_jis",
    "x-euc-jp": "euc_jp",
    "x-gbk": "gbk",
    "x-mac-roman": "mac_roman",
    "ansi_x3.4-1968": "ascii",
}


def text_codec(label: str | None, known: Callable[[str], bool]) -> str:
    """The codec to read a text part labelled ``label`` with: the label itself when ``known``
    says Python has it, a known alias, else UTF-8 (read with replacement by the caller). A
    label a client made up must not cost the user the message."""
    name = (label or "").strip().strip('"').lower()
    name = _CHARSET_ALIASES.get(name, name)
    return name if name and known(name) else "utf-8"
