"""Email decisions: RFC 3834 automated mail, Authentication-Results, threads, subjects, trimming,
and the allow-list's @domain entries."""

from __future__ import annotations

import pytest

from chatgate.model.reasons import DropReason
from chatgate.policies.admission import is_listed
from chatgate.policies.mail import (
    MailFacts,
    ThreadHeaders,
    authenticated,
    automated_reason,
    reply_references,
    reply_subject,
    text_codec,
    thread_root,
    thread_subject,
    trim_reply,
)

BOT = "support@example.org"


@pytest.mark.parametrize(
    ("facts", "reason"),
    [
        (MailFacts("alice@example.org"), None),
        (MailFacts("alice@example.org", auto_submitted="no"), None),
        (MailFacts("alice@example.org", auto_submitted="No; comment"), None),
        (MailFacts("alice@example.org", auto_submitted="auto-replied"), DropReason.AUTOMATED_MAIL),
        (
            MailFacts("alice@example.org", auto_submitted="auto-generated"),
            DropReason.AUTOMATED_MAIL,
        ),
        (MailFacts("alice@example.org", precedence="bulk"), DropReason.AUTOMATED_MAIL),
        (MailFacts("alice@example.org", precedence=" List "), DropReason.AUTOMATED_MAIL),
        (MailFacts("alice@example.org", precedence="junk"), DropReason.AUTOMATED_MAIL),
        (MailFacts("alice@example.org", precedence="first-class"), None),
        (
            MailFacts("alice@example.org", list_id="<dev.lists.example.org>"),
            DropReason.AUTOMATED_MAIL,
        ),
        (MailFacts("alice@example.org", return_path="<>"), DropReason.AUTOMATED_MAIL),
        (MailFacts("alice@example.org", return_path="<alice@example.org>"), None),
        (MailFacts("mailer-daemon@example.org"), DropReason.AUTOMATED_MAIL),
        (MailFacts("postmaster@example.net"), DropReason.AUTOMATED_MAIL),
        (MailFacts(""), DropReason.AUTOMATED_MAIL),
        (
            MailFacts("alice@example.org", content_type="multipart/report"),
            DropReason.AUTOMATED_MAIL,
        ),
        (MailFacts("support@example.org"), DropReason.SELF_MESSAGE),
    ],
)
def test_automated_mail_gets_no_answer(facts: MailFacts, reason: DropReason | None) -> None:
    assert automated_reason(facts, BOT) is reason


@pytest.mark.parametrize(
    ("results", "authserv", "ok"),
    [
        (("mx.example.org; dkim=pass header.d=example.org",), "mx.example.org", True),
        (("mx.example.org; spf=pass smtp.mailfrom=a@example.org",), "mx.example.org", True),
        (("mx.example.org; dmarc=pass header.from=example.org",), None, True),
        (("mx.example.org; dkim=fail; spf=softfail; dmarc=none",), "mx.example.org", False),
        (("evil.example.net; dkim=pass",), "mx.example.org", False),  # not our MTA's
        (("MX.example.org 1; dkim=pass",), "mx.example.org", True),  # version after the id
        ((), None, False),
        (("mx.example.org; none",), None, False),
    ],
)
def test_authentication_results(results: tuple[str, ...], authserv: str | None, ok: bool) -> None:
    assert authenticated(results, authserv) is ok


@pytest.mark.parametrize(
    ("subject", "reply", "key"),
    [
        ("Invoice", "Re: Invoice", "invoice"),
        ("Re: Invoice", "Re: Invoice", "invoice"),
        ("RE: Re: re:  Invoice  42", "Re: Invoice 42", "invoice 42"),
        ("AW: Fwd: Invoice", "Re: Invoice", "invoice"),
        ("Re[2]: Invoice", "Re: Invoice", "invoice"),
        ("", "Re:", ""),
        ("Recipe for bread", "Re: Recipe for bread", "recipe for bread"),
    ],
)
def test_reply_subject_never_doubles_re(subject: str, reply: str, key: str) -> None:
    assert reply_subject(subject) == reply
    assert thread_subject(subject) == key


@pytest.mark.parametrize(
    ("headers", "known", "root"),
    [
        (ThreadHeaders("m1"), None, "m1"),
        (ThreadHeaders("m3", "m2", ("m1", "m2")), "x", "m1"),
        (ThreadHeaders("m3", "m2"), "m1", "m1"),
        (ThreadHeaders("m3", "m2"), None, "m2"),
        (ThreadHeaders("m3"), "m1", "m1"),  # found by subject
    ],
)
def test_thread_root(headers: ThreadHeaders, known: str | None, root: str) -> None:
    assert thread_root(headers, known) == root


def test_reply_references_keep_the_root_when_shortened() -> None:
    assert reply_references(("a", "b"), "c") == ("a", "b", "c")
    assert reply_references((), "c") == ("c",)
    long = tuple(f"m{n}" for n in range(30))
    refs = reply_references(long, "last", keep=5)
    assert refs == ("m0", "m27", "m28", "m29", "last")


@pytest.mark.parametrize(
    ("body", "new"),
    [
        ("Thanks!\n\nOn Mon, 1 Dec 2026 at 10:00, Bot <b@x.org> wrote:\n> old", "Thanks!"),
        ("Yes please\n> quoted\n> more", "Yes please"),
        ("Hello\n-- \nAlice\nACME Corp", "Hello"),
        ("A\n\n-----Original Message-----\nFrom: x", "A"),
        ("> only a quote", "> only a quote"),  # nothing new: keep what there is
        ("Line one\nLine two", "Line one\nLine two"),
    ],
)
def test_trim_reply(body: str, new: str) -> None:
    assert trim_reply(body) == new


@pytest.mark.parametrize(
    ("sender", "entries", "listed"),
    [
        ("alice@example.org", {"alice@example.org"}, True),
        ("Alice@Example.org", {"alice@example.org"}, True),
        ("bob@example.org", {"@example.org"}, True),
        ("bob@EXAMPLE.org", {"@example.org"}, True),
        ("bob@notexample.org", {"@example.org"}, False),
        ("bob@sub.example.org", {"@example.org"}, False),
        ("bob@example.org.evil.net", {"@example.org"}, False),
        ("bob@example.net", {"alice@example.org"}, False),
        ("12345", {"12345"}, True),
        ("12345", {"@12345"}, False),
        ("bob@example.org", set(), False),
    ],
)
def test_allow_list_domain_entries_are_exact(sender: str, entries: set[str], listed: bool) -> None:
    assert is_listed(sender, frozenset(entries)) is listed


KNOWN = frozenset({"utf-8", "iso-8859-1", "cp949", "shift_jis", "ascii"})


@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("utf-8", "utf-8"),
        ("ISO-8859-1", "iso-8859-1"),
        ('"iso-8859-1"', "iso-8859-1"),
        ("ks_c_5601-1987", "cp949"),  # Outlook's Korean
        ("KS_C_5601-1987", "cp949"),
        ("x-sjis", "shift_jis"),
        ("ANSI_X3.4-1968", "ascii"),
        ("x-unknown", "utf-8"),  # made up: UTF-8, read with replacement
        ("unknown-8bit", "utf-8"),
        ("", "utf-8"),
        (None, "utf-8"),
    ],
)
def test_text_codec(label: str | None, codec: str) -> None:
    assert text_codec(label, KNOWN.__contains__) == codec
