"""The email channel adapter: mail in from an IMAP folder, answers out over SMTP.

A mail is journaled before it is flagged \\Seen (and \\Answered once its answer is sent), never
the other way round. Mail that must get no answer (the bot's own, robots, bounces, lists,
unauthenticated when required, too large, unreadable) is recorded with its reason, flagged
\\Seen and left alone: nothing is sent to an address that may be forged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol

from chatgate.channels.base import (
    ChannelAdapter,
    ChannelContext,
    ChannelError,
    InboundSink,
    NotConfigured,
    Rendered,
)
from chatgate.channels.capabilities import Capabilities
from chatgate.channels.email import LIMITS
from chatgate.channels.email.config import EmailChannelConfig, MailServerConfig
from chatgate.channels.email.imap import ImapGone, ImapSession, NewMail, connect
from chatgate.channels.email.inbound import ParsedMail, parse, part_bytes
from chatgate.channels.email.outbound import (
    SMTP_AUTH_HINT,
    Reply,
    Smtp,
    build,
    classify,
    new_message_id,
)
from chatgate.channels.email.outbound import (
    Attachment as MailFile,
)
from chatgate.channels.email.state import MailRecord, MailState, thread_id
from chatgate.channels.email.watcher import Watcher
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment, InboundMessage, SendResult, Target
from chatgate.model.outbound import File, OutboundMessage
from chatgate.model.reasons import DropReason, MediaReason, SendErrorKind, TaintSource
from chatgate.policies.mail import (
    authenticated,
    automated_reason,
    is_reply_subject,
    reply_references,
    reply_subject,
    thread_root,
    thread_subject,
)
from chatgate.policies.taint import UNTRUSTED_EXTRA
from chatgate.presentation.render import to_markdown

log = logging.getLogger("chatgate.email")
FILES_KEY = "mail_files"
RAW_CACHE_BYTES = 64 * 1024 * 1024  # recent mail kept for the media step (else fetched again)


class FileStore(Protocol):
    async def read(self, ref: str) -> bytes: ...


class EmailChannel(ChannelAdapter):
    platform = "email"

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: EmailChannelConfig = ctx.config
        self.state = MailState(ctx.name, ctx.kv.get("facts"), ctx.clock)
        self.smtp = Smtp(self.config.smtp)
        self._sink: InboundSink | None = None
        self._watcher: Watcher | None = None
        self._ops: ImapSession | None = None  # a second connection: flags, moves, files
        self._ops_lock = asyncio.Lock()
        self._raw: OrderedDict[str, bytes] = OrderedDict()
        self._raw_bytes = 0
        self.ignored: dict[str, int] = {}
        self.sent = 0

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(limits=LIMITS)

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self, sink: InboundSink) -> None:
        _require_login(self.config.imap, "imap")
        _require_login(self.config.smtp, "smtp")
        self._sink = sink
        watcher = Watcher(self.config.imap, self.state, self._take, self.fail)
        await watcher.open()  # a refused login parks the channel now
        self._watcher = watcher
        watcher.start()
        log.info("email connected", extra={"address": self.config.address})

    async def stop_intake(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            await watcher.stop()

    async def stop(self) -> None:
        await self.stop_intake()
        async with self._ops_lock:
            ops, self._ops = self._ops, None
            if ops is not None:
                await ops.close()
        await self.smtp.close()

    def reconfigure(self, config: Any) -> None:
        super().reconfigure(config)
        self.config = config

    def stale_after_s(self) -> float | None:
        return None

    def status(self) -> dict[str, Any]:
        detail: dict[str, Any] = {"address": self.config.address, "sent": self.sent}
        watcher = self._watcher
        if watcher is not None:
            detail.update(imap_connects=watcher.connects, imap_errors=watcher.errors)
        if self.ignored:
            detail["ignored"] = dict(self.ignored)
        return detail

    # -- inbound ----------------------------------------------------------------------------

    async def _take(self, session: ImapSession, mails: list[NewMail]) -> None:
        """Journal (or record as ignored) a batch, then flag it \\Seen. Senders' mail is
        journaled side by side, each sender's in order."""
        limit = self.config.max_message_bytes
        raws = await session.bodies([m.uid for m in mails if m.size <= limit])
        by_sender: dict[str, list[tuple[NewMail, ParsedMail]]] = {}
        ignored: list[int] = []
        for mail in mails:
            parsed, reason = self._read(session.validity, mail, raws.get(mail.uid))
            if parsed is None or reason is not None:
                self._ignore(reason or DropReason.MALFORMED_UPDATE)
                ignored.append(mail.uid)
                continue
            self._keep_raw(f"{session.validity}:{mail.uid}", raws[mail.uid])
            by_sender.setdefault(parsed.facts.sender, []).append((mail, parsed))
        await asyncio.gather(
            *(self._journal(session.validity, found) for found in by_sender.values())
        )
        await session.flag_many([m.uid for m in mails], "\\Seen")
        folder = self.config.imap.move_handled_to
        if folder:
            for uid in ignored:
                await session.move(uid, folder)

    def _read(
        self, validity: int, mail: NewMail, raw: bytes | None
    ) -> tuple[ParsedMail | None, DropReason | None]:
        if mail.size > self.config.max_message_bytes:
            return None, DropReason.MESSAGE_TOO_LARGE
        domain = self.config.address.rpartition("@")[2]
        parsed = parse(raw, f"uid-{validity}-{mail.uid}@{domain}") if raw else None
        if parsed is None:
            return None, DropReason.MALFORMED_UPDATE
        reason = automated_reason(parsed.facts, self.config.address)
        if reason is None and self.config.require_authentication_results:
            results = parsed.facts.authentication_results
            if not authenticated(results, self.config.authserv_id):
                reason = DropReason.UNAUTHENTICATED
        return parsed, reason

    async def _journal(self, validity: int, mails: list[tuple[NewMail, ParsedMail]]) -> None:
        assert self._sink is not None
        for mail, parsed in mails:
            await self._sink.submit(await self._message(parsed, validity, mail.uid))

    def _ignore(self, reason: DropReason) -> None:
        self.ignored[reason.value] = self.ignored.get(reason.value, 0) + 1
        if self._sink is not None:
            self._sink.ignored(self.name, reason)

    async def _message(self, parsed: ParsedMail, validity: int, uid: int) -> InboundMessage:
        """The InboundMessage of a mail; its thread is found (and remembered) first."""
        head, sender = parsed.thread, parsed.facts.sender
        subject_key = thread_subject(parsed.subject)
        known: str | None = None
        if not head.references and head.in_reply_to:
            answered = await self.state.record(head.in_reply_to)
            known = answered.root if answered else None
        if not head.references and not head.in_reply_to and is_reply_subject(parsed.subject):
            known = await self.state.subject_root(sender, subject_key)
        root = thread_root(head, known)
        refs = reply_references(head.references, head.message_id)
        await self.state.remember(
            head.message_id, MailRecord(root, parsed.subject, refs, uid, validity)
        )
        if subject_key:
            await self.state.remember_subject(sender, subject_key, root)
        text = parsed.text
        if root == head.message_id and parsed.subject:
            text = f"{parsed.subject}\n\n{text}".strip()
        thread = thread_id(root)
        return InboundMessage(
            channel=self.name,
            platform=self.platform,
            chat_id=sender,
            chat_kind="direct",
            sender_id=sender,
            sender_name=parsed.sender_name,
            message_id=head.message_id,
            text=text,
            thread_id=thread,
            attachments=tuple(
                Attachment(
                    kind=p.kind,
                    name=p.name,
                    mime=p.mime,
                    size=p.size,
                    handle=f"{validity}:{uid}:{p.index}",
                )
                for p in parsed.parts
            ),
            received_at=time.time(),
            reply_target=Target(self.name, sender, thread, head.message_id),
            extra={UNTRUSTED_EXTRA: TaintSource.UNTRUSTED_ROUTE.value}
            if self.config.untrusted
            else {},
        )

    def _keep_raw(self, key: str, raw: bytes) -> None:
        if len(raw) > RAW_CACHE_BYTES // 4:
            return
        self._raw[key] = raw
        self._raw_bytes += len(raw)
        while self._raw_bytes > RAW_CACHE_BYTES and self._raw:
            _, old = self._raw.popitem(last=False)
            self._raw_bytes -= len(old)

    # -- the second IMAP connection ---------------------------------------------------------

    async def _with_ops(self, validity: int, work: Any) -> Any:
        """Run ``work(session)`` on the operations connection (opened on first use, again after
        it drops); None when the folder's UIDVALIDITY is no longer ``validity``."""
        async with self._ops_lock:
            for attempt in (1, 2):
                if self._ops is None or self._ops.lost.is_set():
                    self._ops = await connect(self.config.imap)
                if self._ops.validity != validity:
                    return None
                try:
                    return await work(self._ops)
                except (ImapGone, OSError):
                    with contextlib.suppress(Exception):
                        await self._ops.close()
                    self._ops = None
                    if attempt == 2:
                        raise
        return None

    async def _answered(self, record: MailRecord) -> None:
        """Flag the answered mail \\Answered (and move it when configured); best effort."""
        if not record.uid:
            return
        folder = self.config.imap.move_handled_to

        async def mark(session: ImapSession) -> None:
            await session.flag(record.uid, "\\Answered")
            if folder:
                await session.move(record.uid, folder)

        try:
            await self._with_ops(record.validity, mark)
        except Exception as exc:
            log.warning(
                "could not flag an answered mail: %s", type(exc).__name__, extra={"error": str(exc)}
            )

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        """The file from the mail itself: kept from intake, or fetched again by UID."""
        try:
            validity, uid, index = (int(p) for p in (attachment.handle or "").split(":"))
        except ValueError:
            raise FetchError(MediaReason.DOWNLOAD_FAILED, "not a mail part") from None
        raw = self._raw.get(f"{validity}:{uid}")
        if raw is None:

            async def body(session: ImapSession) -> bytes | None:
                return await session.body(uid)

            try:
                raw = await self._with_ops(validity, body)
            except Exception as exc:
                raise FetchError(MediaReason.DOWNLOAD_FAILED, type(exc).__name__) from None
        found = part_bytes(raw, index) if raw else None
        if found is None:
            raise FetchError(MediaReason.DOWNLOAD_FAILED, "the mail is gone")
        data = found[0]
        if len(data) > max_bytes:
            raise FetchError(MediaReason.TOO_LARGE, f"{len(data)} bytes")
        await asyncio.to_thread(dest.write_bytes, data)
        return len(data)

    # -- outbound ---------------------------------------------------------------------------

    def render(self, message: OutboundMessage) -> list[Rendered]:
        """One mail per answer: the text and every file together."""
        files = tuple(b for b in message.blocks if isinstance(b, File))
        rest = OutboundMessage(tuple(b for b in message.blocks if not isinstance(b, File)))
        text = to_markdown(rest) if rest.blocks else ""
        return [Rendered(text, "markdown", {FILES_KEY: files})]

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        record = await self.state.record(target.reply_to) if target.reply_to else None
        subject = record.subject if record else ""
        files = await self._files(rendered)
        reply = Reply(
            sender=self.config.address,
            to=target.chat_id,
            subject=reply_subject(subject) if record else (subject or "Message"),
            markdown=rendered.text,
            in_reply_to=target.reply_to,
            references=record.references if record else (),
            files=files,
        )
        message_id = new_message_id(self.config.address)
        await self.smtp.send(build(reply, message_id))
        self.sent += 1
        if record is not None:
            refs = reply_references(record.references, message_id)
            await self.state.remember(message_id, MailRecord(record.root, subject, refs))
            await self._answered(record)
        return SendResult.sent(message_id)

    async def _files(self, rendered: Rendered) -> tuple[MailFile, ...]:
        files = rendered.native.get(FILES_KEY) or ()
        if not files:
            return ()
        store: FileStore | None = self.ctx.kv.get("files")
        found: list[MailFile] = []
        for file in files:
            data = file.data
            if data is None and store is not None and file.ref:
                data = await store.read(file.ref)
            if data is not None:
                found.append(MailFile(file.name, file.mime, data))
        return tuple(found)

    def classify_error(self, exc: BaseException) -> SendResult:
        result = classify(exc)
        if result.kind is SendErrorKind.AUTH_FATAL:
            self.fail(
                ChannelError(
                    "the SMTP server refused the login", kind=result.kind, hint=SMTP_AUTH_HINT
                )
            )
        log.warning("email send failed", extra={"kind": str(result.kind), "error": result.error})
        return result


def _require_login(server: MailServerConfig, section: str) -> None:
    if server.password is None and server.oauth2 is None:
        raise NotConfigured(
            f"no {section.upper()} credentials",
            f"set channels.email.{section}.password (or password_file, or oauth2.token_file)",
        )


__all__ = ["EmailChannel"]
