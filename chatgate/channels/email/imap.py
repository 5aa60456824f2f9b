"""One logged-in IMAP connection (aioimaplib) with the folder selected: new mail by UID, bodies
without setting \\Seen, flags, moves, and IDLE (or a poll where the server has none)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from aioimaplib import aioimaplib

from chatgate.channels.base import ChannelError
from chatgate.channels.email.config import ImapConfig, MailServerConfig
from chatgate.config.base import secret_value
from chatgate.model.reasons import SendErrorKind

T = TypeVar("T")
_UIDVALIDITY = re.compile(rb"\[UIDVALIDITY (\d+)\]")
_UIDNEXT = re.compile(rb"\[UIDNEXT (\d+)\]")
_FETCH_UID = re.compile(rb"\bUID (\d+)")
_FETCH_SIZE = re.compile(rb"\bRFC822\.SIZE (\d+)")
_CHANGES = (b"EXISTS", b"RECENT")
AUTH_HINT = (
    "the IMAP server refused the login: check channels.email.imap.username and password (Gmail "
    "and Microsoft 365 need an app password or oauth2, and IMAP enabled for the mailbox)"
)

CERT_HINT = (
    "set channels.email.imap.ca_file to the CA (or the self-signed certificate) of your mail "
    "server, or check that imap.host is the name on its certificate"
)
OAUTH_HINT = (
    "the IMAP server refused the OAuth2 access token: check that the helper keeps "
    "channels.email.imap.oauth2.token_file fresh (and reloads chatgate), that the token has the "
    "mail scope "
    "(https://mail.google.com/ or IMAP.AccessAsUser.All) and that imap.username is the mailbox"
)


class ImapGone(ConnectionError):
    """The connection closed or a command failed at the protocol level: reconnect."""


def tls_context(config: MailServerConfig) -> ssl.SSLContext | None:
    if config.tls == "none":
        return None
    context = ssl.create_default_context()
    if config.ca:
        context.load_verify_locations(cadata=config.ca)
    return context


@dataclass(frozen=True)
class NewMail:
    uid: int
    size: int


class ImapSession:
    """A selected folder on one connection; ``lost`` resolves when the connection closes."""

    def __init__(self, client: aioimaplib.IMAP4, lost: asyncio.Event, timeout_s: float) -> None:
        self.client = client
        self.lost = lost
        self.timeout_s = timeout_s
        self.validity = 0
        self.uidnext = 1

    @property
    def can_idle(self) -> bool:
        return bool(self.client.has_capability("IDLE"))

    @property
    def can_move(self) -> bool:
        return bool(self.client.has_capability("MOVE"))

    async def select(self, folder: str) -> None:
        response = await self.client.select(folder)
        if response.result != "OK":
            raise ChannelError(
                f"cannot open the IMAP folder {folder!r}: {_text(response.lines)}",
                kind=SendErrorKind.INVALID_REQUEST,
                fatal=True,
                hint="check channels.email.imap.folder (it must exist in the mailbox)",
            )
        joined = b"\n".join(line for line in response.lines if isinstance(line, bytes))
        validity = _UIDVALIDITY.search(joined)
        uidnext = _UIDNEXT.search(joined)
        self.validity = int(validity.group(1)) if validity else 0
        self.uidnext = int(uidnext.group(1)) if uidnext else 1

    async def new_mail(self, after: int) -> list[NewMail]:
        """Mail with a UID above ``after``, oldest first, with sizes (bodies not fetched)."""
        response = await self._uid("fetch", f"{after + 1}:*", "(UID RFC822.SIZE)")
        found: list[NewMail] = []
        for line in response.lines:
            if not isinstance(line, bytes | bytearray) or b"FETCH" not in line:
                continue
            uid, size = _FETCH_UID.search(line), _FETCH_SIZE.search(line)
            if uid is not None and int(uid.group(1)) > after:  # "n:*" also names the last one
                found.append(NewMail(int(uid.group(1)), int(size.group(1)) if size else 0))
        return sorted(found, key=lambda m: m.uid)

    async def body(self, uid: int) -> bytes | None:
        """The whole mail (BODY.PEEK: \\Seen is set by us, after journaling); None if gone."""
        response = await self._uid("fetch", str(uid), "BODY.PEEK[]")
        for line in response.lines:
            if isinstance(line, bytearray):
                return bytes(line)
        return None

    async def bodies(self, uids: list[int]) -> dict[int, bytes]:
        """Several whole mails in one command (BODY.PEEK, as ``body``); gone ones are missing."""
        if not uids:
            return {}
        response = await self._uid("fetch", _uid_set(uids), "(UID BODY.PEEK[])")
        found: dict[int, bytes] = {}
        uid = 0
        for line in response.lines:
            if isinstance(line, bytearray):
                if uid:
                    found[uid] = bytes(line)
                uid = 0
            elif isinstance(line, bytes) and b"FETCH" in line:
                match = _FETCH_UID.search(line)
                uid = int(match.group(1)) if match else 0
        return found

    async def flag(self, uid: int, *flags: str) -> None:
        await self.flag_many([uid], *flags)

    async def flag_many(self, uids: list[int], *flags: str) -> None:
        if uids:
            await self._uid("store", _uid_set(uids), "+FLAGS.SILENT", f"({' '.join(flags)})")

    async def move(self, uid: int, folder: str) -> None:
        if not self.can_move:
            await self._uid("copy", str(uid), folder)
            await self._uid("store", str(uid), "+FLAGS.SILENT", "(\\Deleted)")
            await self._uid("expunge", str(uid))
            return
        response = await self._command(self.client.protocol.move(str(uid), folder, by_uid=True))
        _check(response, f"UID MOVE to {folder}")

    async def wait_for_change(self, timeout_s: float, poll_s: float) -> None:
        """Return when the folder may have new mail, the connection is lost, or ``timeout_s``
        (IDLE); without IDLE, after ``poll_s`` (a NOOP then proves the connection)."""
        if not self.can_idle:
            await self._wait_lost(min(timeout_s, poll_s))
            await self._noop()
            return
        idle = await self.client.idle_start(timeout=timeout_s)
        try:
            while not self.lost.is_set():
                push = await self._push(timeout_s + 5)
                if push is None or push == aioimaplib.STOP_WAIT_SERVER_PUSH:
                    break
                if any(isinstance(line, bytes) and line.endswith(_CHANGES) for line in push or ()):
                    break
        finally:
            if self.client.has_pending_idle() and not self.lost.is_set():
                self.client.idle_done()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(idle, 10)
        if self.lost.is_set():
            raise ImapGone("the IMAP connection closed")

    async def _push(self, timeout_s: float) -> list[bytes] | str | None:
        push = asyncio.ensure_future(self.client.wait_server_push(timeout_s))
        lost = asyncio.ensure_future(self.lost.wait())
        try:
            done, _ = await asyncio.wait({push, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            if not push.done():
                push.cancel()
        if push not in done or push.cancelled() or push.exception() is not None:
            return None
        result: list[bytes] | str = push.result()
        return result

    async def _wait_lost(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.lost.wait(), seconds)
        if self.lost.is_set():
            raise ImapGone("the IMAP connection closed")

    async def _noop(self) -> None:
        _check(await self._command(self.client.noop()), "NOOP")

    async def _uid(self, command: str, *args: str) -> aioimaplib.Response:
        response = await self._command(self.client.uid(command, *args))
        _check(response, f"UID {command.upper()}")
        return response

    async def _command(self, call: Awaitable[aioimaplib.Response]) -> aioimaplib.Response:
        return await _bounded(_guard(call), self.lost, self.timeout_s)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.client.has_pending_idle():
                self.client.idle_done()
            if not self.lost.is_set():
                await _bounded(self.client.logout(), self.lost, min(self.timeout_s, 5))
        transport = self.client.protocol.transport
        if transport is not None:
            transport.close()
        for task in (*self.client.tasks, *self.client.protocol.tasks):
            task.cancel()  # a greeting's CAPABILITY or an IDLE the connection left waiting


async def _bounded(call: Awaitable[T], lost: asyncio.Event, timeout_s: float) -> T:
    """``call``'s result; ImapGone when the connection drops first or ``timeout_s`` passes. The
    call is cancelled, not awaited: aioimaplib leaves a command in flight at a drop waiting for
    ever, bounds neither UID STORE, COPY, EXPUNGE nor MOVE, and a greeting cut short holds its
    state lock, so its own timeout then waits for ever too (`close` cancels what it left)."""
    work = asyncio.ensure_future(call)
    if lost.is_set():
        work.cancel()
        raise ImapGone("the IMAP connection closed")
    watch = asyncio.ensure_future(lost.wait())
    try:
        await asyncio.wait((work, watch), timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not work.done():
            work.cancel()
    if work.done() and not work.cancelled():
        return work.result()
    raise ImapGone("the IMAP connection closed" if lost.is_set() else "IMAP: no answer")


def _uid_set(uids: list[int]) -> str:
    return ",".join(str(u) for u in sorted(set(uids)))


async def _guard(call: Awaitable[aioimaplib.Response]) -> aioimaplib.Response:
    try:
        response: aioimaplib.Response = await call
    except (aioimaplib.Abort, aioimaplib.CommandTimeout, TimeoutError) as exc:
        raise ImapGone(f"IMAP: {type(exc).__name__}") from None
    return response


def _check(response: aioimaplib.Response, what: str) -> None:
    if response.result != "OK":
        raise ImapGone(f"{what} failed: {_text(response.lines)}")


def _text(lines: list[bytes | bytearray] | list[bytes]) -> str:
    return " ".join(bytes(line).decode(errors="replace") for line in lines[-1:])[:200]


async def connect(config: ImapConfig, on_lost: Callable[[], None] | None = None) -> ImapSession:
    """Connect, log in (password or XOAUTH2) and select the folder. A refused login raises a
    fatal ChannelError (parks the channel, with the fix); network trouble raises OSError."""
    lost = asyncio.Event()

    def closed(exc: Exception | None) -> None:
        lost.set()
        if on_lost is not None:
            on_lost()

    context = tls_context(config)
    kwargs = {"host": config.host, "port": config.port, "timeout": config.timeout_s}
    client = (
        aioimaplib.IMAP4_SSL(ssl_context=context, **kwargs)
        if context is not None
        else aioimaplib.IMAP4(conn_lost_cb=closed, **kwargs)
    )
    if context is not None:
        client.protocol.conn_lost_cb = closed
    session = ImapSession(client, lost, config.timeout_s)
    try:
        try:
            await _bounded(client.wait_hello_from_server(), lost, config.timeout_s)
        except ssl.SSLCertVerificationError as exc:
            raise ChannelError(
                f"the IMAP server's certificate is not trusted ({exc.verify_message})",
                kind=SendErrorKind.AUTH_FATAL,
                hint=CERT_HINT,
            ) from None
        await _login(client, config)
        await session.select(config.folder)
    except BaseException:
        await session.close()
        raise
    return session


async def _login(client: aioimaplib.IMAP4, config: ImapConfig) -> None:
    user = config.username or ""
    if config.oauth2 is not None:
        token = config.oauth2.token.get_secret_value().strip()
        try:
            response = await client.xoauth2(user, token)
        except TimeoutError:
            # A refused token is a SASL challenge the client library leaves unanswered: the
            # login then times out on a connection that is up (its greeting came).
            raise ChannelError(
                "the IMAP server refused the OAuth2 token (or never answered the login)",
                kind=SendErrorKind.AUTH_FATAL,
                hint=OAUTH_HINT,
            ) from None
    else:
        response = await _guard(client.login(user, secret_value(config.password) or ""))
    if response.result != "OK":
        raise ChannelError(
            "the IMAP server refused the login", kind=SendErrorKind.AUTH_FATAL, hint=AUTH_HINT
        )
