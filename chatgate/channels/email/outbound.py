"""Answers as mail: one message per answer (plain text and HTML rendered from the Markdown, the
reply's files attached), threaded under the mail it answers, sent with aiosmtplib over one
reused connection. SMTP replies are classified by RFC 5321: 4xx and connection trouble are
retried, 5xx is permanent."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

import aiosmtplib
from pydantic import SecretStr

from chatgate import tracing
from chatgate.channels.email.config import SmtpConfig
from chatgate.channels.email.imap import tls_context
from chatgate.config.base import secret_value
from chatgate.model.messages import SendResult
from chatgate.model.reasons import SendErrorKind
from chatgate.presentation.markdown import markdown_to_html, markdown_to_plain

log = logging.getLogger("chatgate.email")
SMTP_AUTH_HINT = (
    "the SMTP server refused the login: check channels.email.smtp.username and password (an "
    "app password for Gmail and Microsoft 365, or oauth2)"
)
_HTML = (
    '<!doctype html><html><body><div style="white-space:pre-wrap;font-family:sans-serif">'
    "{body}</div></body></html>"
)


@dataclass(frozen=True)
class Attachment:
    name: str
    mime: str
    data: bytes


@dataclass(frozen=True)
class Reply:
    """What one answer mail says and where it belongs."""

    sender: str
    to: str
    subject: str
    markdown: str
    in_reply_to: str | None = None
    references: tuple[str, ...] = ()
    files: tuple[Attachment, ...] = ()


def _bracket(ids: Sequence[str]) -> str:
    return " ".join(f"<{i}>" for i in ids)


def build(reply: Reply, message_id: str) -> EmailMessage:
    """The MIME message of ``reply``: multipart/alternative text and HTML, files attached,
    `Auto-Submitted: auto-replied` (RFC 3834) so other robots do not answer it."""
    msg = EmailMessage()
    msg["From"] = reply.sender
    msg["To"] = reply.to
    msg["Subject"] = reply.subject
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = f"<{message_id}>"
    if reply.in_reply_to:
        msg["In-Reply-To"] = f"<{reply.in_reply_to}>"
    if reply.references:
        msg["References"] = _bracket(reply.references)
    msg["Auto-Submitted"] = "auto-replied"
    msg.set_content(markdown_to_plain(reply.markdown) or " ")
    msg.add_alternative(_HTML.format(body=markdown_to_html(reply.markdown)), subtype="html")
    for file in reply.files:
        major, _, minor = file.mime.partition("/")
        if not minor:
            major, minor = "application", "octet-stream"
        msg.add_attachment(file.data, maintype=major, subtype=minor, filename=file.name)
    return msg


def new_message_id(address: str) -> str:
    """A Message-ID on the bot's own domain, without brackets."""
    return make_msgid(domain=address.rpartition("@")[2] or "localhost").strip("<>")


def classify(exc: BaseException) -> SendResult:
    """An SMTP failure as a SendResult: 5xx permanent (to the DLQ with the server's words), 4xx
    and connection trouble transient, a refused login fatal."""
    if isinstance(exc, aiosmtplib.SMTPAuthenticationError):
        return SendResult.failed(SendErrorKind.AUTH_FATAL, f"{exc.code} {exc.message}")
    if isinstance(exc, aiosmtplib.SMTPRecipientsRefused) and exc.recipients:
        exc = exc.recipients[0]
    if isinstance(exc, aiosmtplib.SMTPResponseException) and not isinstance(
        exc, aiosmtplib.SMTPConnectError
    ):
        reply = f"{exc.code} {exc.message}"[:500]
        if 500 <= exc.code < 600:
            return SendResult.failed(SendErrorKind.INVALID_REQUEST, reply)
        return SendResult.failed(SendErrorKind.TRANSIENT, reply)
    if isinstance(exc, TimeoutError):
        return SendResult.timeout(type(exc).__name__)
    if isinstance(exc, aiosmtplib.SMTPException | OSError):
        return SendResult.failed(SendErrorKind.TRANSIENT, type(exc).__name__)
    return SendResult.failed(SendErrorKind.UNKNOWN, type(exc).__name__)


def _token_of(secret: SecretStr) -> Callable[[], Awaitable[str]]:
    async def token() -> str:
        return secret.get_secret_value().strip()

    return token


class _Connection:
    """One SMTP connection, opened on first use and again after it drops."""

    def __init__(self, make: Callable[[], aiosmtplib.SMTP]) -> None:
        self._make = make
        self.client: aiosmtplib.SMTP | None = None

    async def send(self, message: EmailMessage) -> None:
        for attempt in (1, 2):
            client = self.client
            if client is None or not client.is_connected:
                client = self.client = self._make()
                await client.connect()
            try:
                with tracing.span("email send", kind="client", inside=True, leaf=True):
                    await client.send_message(message)  # SMTP MAIL, RCPT, DATA
                return
            except aiosmtplib.SMTPServerDisconnected:
                self.client = None  # an idle connection the server closed: once more
                if attempt == 2:
                    raise
            except BaseException:
                self.drop()
                raise

    def drop(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is not None and client.is_connected:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.quit(), 5)
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()


class Smtp:
    """Up to ``config.connections`` SMTP connections, each sending one mail at a time (a
    burst of answers goes out side by side, not behind one connection's round trips)."""

    def __init__(self, config: SmtpConfig) -> None:
        self.config = config
        self._all = [_Connection(self.make_client) for _ in range(config.connections)]
        self._free: asyncio.Queue[_Connection] = asyncio.Queue()
        for connection in self._all:
            self._free.put_nowait(connection)

    def make_client(self) -> aiosmtplib.SMTP:
        c = self.config
        token = c.oauth2
        return aiosmtplib.SMTP(
            hostname=c.host,
            port=c.port,
            username=c.username if (c.password or token) else None,
            password=secret_value(c.password),
            oauth_token_generator=_token_of(token.token) if token else None,
            use_tls=c.tls == "implicit",
            start_tls=c.tls == "starttls",
            tls_context=tls_context(c),
            timeout=c.timeout_s,
        )

    async def send(self, message: EmailMessage) -> None:
        connection = await self._free.get()
        try:
            await connection.send(message)
        finally:
            self._free.put_nowait(connection)

    async def close(self) -> None:
        for connection in self._all:
            await connection.close()
