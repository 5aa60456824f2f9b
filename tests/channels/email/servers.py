"""The email tests' mail world: a real Dovecot mailbox per test and a real SMTP server
(aiosmtpd) that takes the bot's mail (recorded, or refused on request) and delivers mail for
the bot's address into its Dovecot mailbox (IMAP APPEND, as a local MTA would)."""

from __future__ import annotations

import asyncio
import imaplib
import itertools
import socket
import threading
import time
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

from tests.channels.email.dovecot import PASSWORD, Dovecot

SMTP_USER = "bot"
SMTP_PASSWORD = "smtp-secret-Pa55"
_users = itertools.count(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Mailbox:
    """A Dovecot account the bot watches."""

    dovecot: Dovecot
    user: str
    password: str
    address: str

    def imap(self) -> imaplib.IMAP4:
        conn = imaplib.IMAP4(self.dovecot.host, self.dovecot.port)
        conn.login(self.user, self.password)
        return conn

    def append(self, raw: bytes, folder: str = "INBOX") -> None:
        conn = self.imap()
        try:
            conn.append(folder, None, None, raw)
        finally:
            conn.logout()

    def flags(self, folder: str = "INBOX") -> dict[int, str]:
        """UID → flags of every mail in ``folder``."""
        conn = self.imap()
        try:
            conn.select(folder)
            _, data = conn.uid("FETCH", "1:*", "(FLAGS)")
            found: dict[int, str] = {}
            for line in data:
                if isinstance(line, bytes) and b"UID" in line:
                    text = line.decode()
                    uid = int(text.split("UID ")[1].split()[0].rstrip(")"))
                    found[uid] = text.split("FLAGS (")[1].split(")")[0]
            return found
        finally:
            conn.logout()

    def count(self, folder: str) -> int:
        conn = self.imap()
        try:
            _, data = conn.select(folder)
            return int(data[0] or 0)
        finally:
            conn.logout()


def new_mailbox(dovecot: Dovecot) -> Mailbox:
    n = next(_users)
    user = f"support{n}"
    return Mailbox(dovecot, user, PASSWORD, f"{user}@example.org")


@dataclass
class _Handler:
    mailbox: Mailbox
    sent: list[EmailMessage] = field(default_factory=list)
    refuse: dict[str, str] = field(default_factory=dict)  # recipient → SMTP reply
    defer: int = 0  # refuse this many next mails with a 451
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_RCPT(
        self, server: Any, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        reply = self.refuse.get(address.lower())
        if reply is not None:
            return reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        if self.mailbox.address in [r.lower() for r in envelope.rcpt_tos]:
            await asyncio.to_thread(self.mailbox.append, raw)
            return "250 delivered"
        with self.lock:
            if self.defer > 0:  # the bot's mail only
                self.defer -= 1
                return "451 4.3.0 try again later"
        msg = message_from_bytes(raw, policy=policy.default)
        assert isinstance(msg, EmailMessage)
        with self.lock:
            self.sent.append(msg)
        return "250 OK"


def _auth(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
    ok = (
        isinstance(data, LoginPassword)
        and data.login == SMTP_USER.encode()
        and data.password == SMTP_PASSWORD.encode()
    )
    return AuthResult(success=ok)


class MailWorld:
    """Dovecot mailbox + SMTP server for one test."""

    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox
        self.handler = _Handler(mailbox)
        self.smtp_port = free_port()
        self.imap_port = mailbox.dovecot.port  # a test may put a proxy in between
        self.controller = Controller(
            self.handler,
            hostname="127.0.0.1",
            port=self.smtp_port,
            authenticator=_auth,
            auth_require_tls=False,
        )

    def start(self) -> MailWorld:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    @property
    def address(self) -> str:
        return self.mailbox.address

    def sent(self) -> list[EmailMessage]:
        with self.handler.lock:
            return list(self.handler.sent)

    async def wait_sent(self, count: int, timeout: float = 60) -> list[EmailMessage]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.sent()
            if len(found) >= count:
                return found
            await asyncio.sleep(0.02)
        raise AssertionError(f"{len(self.sent())} mails sent, wanted {count}")

    async def deliver(self, msg: EmailMessage) -> None:
        """Send ``msg`` to the bot through the SMTP server (which files it in the mailbox)."""
        import aiosmtplib

        await aiosmtplib.send(
            msg,
            hostname="127.0.0.1",
            port=self.smtp_port,
            username=SMTP_USER,
            password=SMTP_PASSWORD,
            start_tls=False,
        )

    def config(self, **channel: str) -> str:
        """The `channels.email` section for this world (extra keys as YAML lines)."""
        extra = "".join(f"    {k}: {v}\n" for k, v in channel.items())
        return (
            "channels:\n  email:\n"
            f"    address: {self.address}\n"
            "    imap:\n"
            f"      host: 127.0.0.1\n      port: {self.imap_port}\n      tls: none\n"
            f"      username: {self.mailbox.user}\n      password: {self.mailbox.password}\n"
            "      timeout_s: 5\n"
            "    smtp:\n"
            f"      host: 127.0.0.1\n      port: {self.smtp_port}\n      tls: none\n"
            f"      username: {SMTP_USER}\n      password: {SMTP_PASSWORD}\n"
            "      timeout_s: 5\n"
            f"{extra}"
        )


def mail(
    sender: str,
    to: str,
    subject: str,
    body: str,
    *,
    message_id: str | None = None,
    in_reply_to: str | None = None,
    references: str | None = None,
    headers: dict[str, str] | None = None,
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = message_id or make_msgid(domain=sender.rpartition("@")[2])
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
    if references:
        msg["References"] = references
    for name, value in (headers or {}).items():
        msg[name] = value
    msg.set_content(body)
    return msg
