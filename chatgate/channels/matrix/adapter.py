"""The Matrix channel adapter on mautrix: `/sync` intake, answers as (encrypted) room events.

Intake: our own `/sync` loop stores `next_batch` only after the events it covers are journaled.
Outbound: HTML + plain body relating to the message answered (`m.in_reply_to`, and the thread
relation in a thread), streaming by `m.replace` edits, typing and read receipts while a turn
runs, files uploaded to the media repository. A refused token parks the channel with its fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import Any

from mautrix.errors import MNotFound
from mautrix.types import EventType, RoomID

from chatgate import tracing
from chatgate.channels.base import (
    ChannelAdapter,
    ChannelContext,
    ChannelError,
    InboundSink,
    Rendered,
)
from chatgate.channels.capabilities import AckMode, Capabilities
from chatgate.channels.files import render_with_files, upload_of
from chatgate.channels.matrix import LIMITS, errors, media
from chatgate.channels.matrix.client import Session, connect
from chatgate.channels.matrix.config import MatrixChannelConfig
from chatgate.channels.matrix.crypto import OLM_HINT, Crypto, Place, enable, olm_missing
from chatgate.channels.matrix.inbound import Me
from chatgate.channels.matrix.intake import SENT_IDS_KEPT, Intake
from chatgate.channels.matrix.receipts import Receipts
from chatgate.channels.matrix.render import render, utf8_len
from chatgate.channels.matrix.sync import FileTokens, RedisTokens, SyncLoop, TokenStore
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment, InboundMessage, SendResult, Target
from chatgate.model.outbound import File, OutboundMessage
from chatgate.model.reasons import MediaReason, SendErrorKind

log = logging.getLogger("chatgate.matrix")
CONNECT_TIMEOUT_S = 30.0
TYPING_MS = 30_000
TYPING_REFRESH_S = 20.0
SHARED_KV = "redis"


def capabilities(config: MatrixChannelConfig) -> Capabilities:
    ack = AckMode.TYPING
    if config.read_receipts or config.ack_reaction:
        ack |= AckMode.REACTION
    return Capabilities(
        limits=LIMITS,
        length=utf8_len,
        edits=True,
        reactions=True,
        threads=config.threads,
        ack=ack,
        typing_every_s=TYPING_REFRESH_S,
        stream=config.stream.enabled,
        min_edit_interval_s=config.stream.min_edit_interval_s,
    )


class MatrixChannel(ChannelAdapter):
    platform = "matrix"

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: MatrixChannelConfig = ctx.config
        self.session: Session | None = None
        self.crypto: Crypto | None = None
        self.e2ee_off_reason: str | None = None
        self.me = Me("")
        self.intake: Intake | None = None
        self.sync: SyncLoop | None = None
        self.last_error: dict[str, Any] | None = None
        self._task: asyncio.Task[None] | None = None
        self._sent: dict[str, None] = {}
        self._upload_limit: int | None = None
        self._typing_in: set[str] = set()  # rooms where the bot's typing indicator is on
        self.receipts = Receipts(self._receipt)

    @property
    def capabilities(self) -> Capabilities:
        return self.capabilities_of(capabilities)

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self, sink: InboundSink) -> None:
        try:
            self.session = await asyncio.wait_for(connect(self.config), CONNECT_TIMEOUT_S)
        except ChannelError as exc:
            self.note_error(str(exc), exc.hint)
            raise
        except Exception as exc:
            if errors.kind_of(exc) is SendErrorKind.AUTH_FATAL:
                error = errors.fatal(exc)
                self.note_error(str(error), error.hint)
                raise error from None
            raise ChannelError(f"homeserver unreachable: {errors.describe(exc)}") from None
        try:
            await self._prepare(sink)
        except BaseException:
            await self._close()
            raise
        self._task = asyncio.create_task(self._run(), name=f"matrix-sync-{self.name}")
        log.info("matrix connected", extra={"user": self.me.user_id, "e2ee": bool(self.crypto)})

    async def _prepare(self, sink: InboundSink) -> None:
        assert self.session is not None
        client = self.session.client
        name = ""
        with contextlib.suppress(Exception):
            name = await client.get_displayname(client.mxid) or ""
        self.me = Me(str(client.mxid), name)
        if self.config.e2ee:
            self.e2ee_off_reason = olm_missing()
            if self.e2ee_off_reason is None:
                self.crypto = await enable(client, self._keys_place())
            else:
                log.warning("e2ee off: %s (%s)", self.e2ee_off_reason, OLM_HINT)
        self.intake = Intake(
            self.name, lambda: self.config, client, sink, self.me, self.crypto, self._sent
        )
        self.sync = SyncLoop(
            client,
            self._tokens(),
            self.intake.handle,
            self._fatal,
            self.session.notes,
            timeout_s=self.config.sync_timeout_s,
            lease_left=self.ctx.lease.remaining_s,
        )
        await self.sync.prime()
        await self.intake.load_direct()
        with contextlib.suppress(Exception):
            self._upload_limit = await media.upload_limit(self.session)

    def _folder(self) -> Path:
        return self.ctx.state_dir / "matrix" / self.name

    def _keys_place(self) -> Place:
        """The crypto store: Redis in replica mode (the next lease holder decrypts too)."""
        share = self.ctx.kv.get(SHARED_KV)
        folder = self._folder() / "crypto"
        if share is None:
            return Place(folder)
        return Place(folder, share.client, share.keys("matrix", self.name, self.me.user_id, "e2ee"))

    def _tokens(self) -> TokenStore:
        share = self.ctx.kv.get(SHARED_KV)
        if share is not None:
            return RedisTokens(share.client, share.keys("matrix", self.name, self.me.user_id))
        return FileTokens(self._folder() / "next_batch")

    async def _run(self) -> None:
        assert self.sync is not None
        try:
            await self.sync.run()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("matrix sync loop died")
            self.fail(exc)

    def _fatal(self, error: BaseException) -> None:
        if isinstance(error, ChannelError):
            self.note_error(str(error), error.hint)
        self.fail(error)

    async def stop_intake(self) -> None:
        await self._stop_sync()

    async def _stop_sync(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def stop(self) -> None:
        await self._stop_sync()
        await self._close()

    async def _close(self) -> None:
        if self.crypto is not None:
            with contextlib.suppress(Exception):
                await self.crypto.close()
            self.crypto = None
        if self.session is not None:
            await self.session.close()
            self.session = None

    # -- outbound ---------------------------------------------------------------------------

    def render(self, message: OutboundMessage) -> list[Rendered]:
        return render_with_files(message, lambda m: render(m, self.config.max_event_bytes))

    def _client(self) -> Any:
        if self.session is None:
            raise ChannelError("matrix is not connected", kind=SendErrorKind.TRANSIENT)
        return self.session.client

    async def _post(self, room: str, content: dict[str, Any], kind: EventType) -> str:
        with tracing.span(f"matrix send {kind.t}", kind="client", inside=True, leaf=True):
            event_id = await self._client().send_message_event(RoomID(room), kind, content)
        self._sent[str(event_id)] = None
        while len(self._sent) > SENT_IDS_KEPT:
            self._sent.pop(next(iter(self._sent)))
        return str(event_id)

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        upload = upload_of(rendered)
        try:
            if upload is not None:
                content = await self._file_content(target, *upload)
            else:
                content = dict(rendered.native.get("content") or {"msgtype": "m.text"})
                content.setdefault("body", rendered.text)
            relation = relates(target)
            if relation:
                content["m.relates_to"] = relation
            event_id = await self._post(target.chat_id, content, EventType.ROOM_MESSAGE)
        except FetchError as exc:
            return SendResult.failed(SendErrorKind.INVALID_REQUEST, exc.detail)
        except ChannelError:
            raise
        except Exception as exc:
            return self.classify_error(exc)
        return SendResult.sent(event_id)

    async def _file_content(self, target: Target, file: File, data: bytes) -> dict[str, Any]:
        assert self.session is not None
        limit = self._upload_limit
        if limit is not None and len(data) > limit:
            raise FetchError(MediaReason.TOO_LARGE, f"{len(data)} bytes over m.upload.size")
        encrypt = self.crypto is not None and await self._encrypted(target.chat_id)
        content = await media.upload_content(
            self.session, data, file.name, file.mime, file.kind == "voice", encrypt
        )
        if file.caption:
            content["body"] = file.caption
        return content

    async def _encrypted(self, room: str) -> bool:
        """Whether the room is encrypted (asked of the server when the syncs did not say, e.g.
        after a restart): a file for an encrypted room is never uploaded in the clear."""
        client = self._client()
        known = await client.state_store.is_encrypted(RoomID(room))
        if known is not None:
            return bool(known)
        try:
            await client.get_state_event(RoomID(room), EventType.ROOM_ENCRYPTION)
        except MNotFound:
            return False
        return True

    async def edit(self, target: Target, message_id: str, rendered: Rendered) -> SendResult:
        new = dict(rendered.native.get("content") or {"msgtype": "m.text", "body": rendered.text})
        content = {
            **{k: v for k, v in new.items() if k in ("msgtype", "format")},
            "body": "* " + str(new.get("body", "")),
            "m.new_content": new,
            "m.relates_to": {"rel_type": "m.replace", "event_id": message_id},
        }
        if "formatted_body" in new:
            content["formatted_body"] = "* " + str(new["formatted_body"])
        try:
            event_id = await self._post(target.chat_id, content, EventType.ROOM_MESSAGE)
        except Exception as exc:
            return self.classify_error(exc)
        return SendResult.sent(message_id, event_id)

    async def react(self, target: Target, message_id: str, emoji: str) -> None:
        relation = {"rel_type": "m.annotation", "event_id": message_id, "key": emoji}
        with contextlib.suppress(Exception):
            await self._post(target.chat_id, {"m.relates_to": relation}, EventType.REACTION)

    async def typing(self, target: Target) -> None:
        with contextlib.suppress(Exception):
            self._typing_in.add(target.chat_id)
            await self._client().set_typing(RoomID(target.chat_id), timeout=TYPING_MS)

    async def _receipt(self, room: str, event_id: str) -> None:
        await self._client().send_receipt(RoomID(room), event_id)

    async def acknowledge(self, msg: InboundMessage) -> None:
        """The turn starts: a read receipt (and the ack reaction when one is set)."""
        try:
            if self.config.read_receipts:
                await self.receipts.mark(msg.chat_id, msg.message_id.split(":edit:")[0])
            if self.config.ack_reaction:
                await self.react(
                    msg.reply_target or Target(self.name, msg.chat_id),
                    msg.message_id,
                    self.config.ack_reaction,
                )
        except Exception as exc:
            log.debug("matrix acknowledge failed: %s", type(exc).__name__)

    async def acknowledge_done(self, msg: InboundMessage, *, failed: bool) -> None:
        """The typing indicator off, where this bot turned it on (a fast turn showed none)."""
        if msg.chat_id not in self._typing_in:
            return
        self._typing_in.discard(msg.chat_id)
        with contextlib.suppress(Exception):
            await self._client().set_typing(RoomID(msg.chat_id), timeout=0)

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        if self.session is None:
            raise FetchError(MediaReason.DOWNLOAD_FAILED, "channel not started")
        return await media.fetch(
            self.session, self.config.homeserver_url, attachment, dest, max_bytes
        )

    def classify_error(self, exc: BaseException) -> SendResult:
        notes = self.session.notes if self.session is not None else None
        result = errors.result(exc, notes.take() if notes is not None else None)
        if result.kind is SendErrorKind.AUTH_FATAL:
            error = errors.fatal(exc)
            self.note_error(str(error), error.hint)
            self.fail(error)
        elif result.kind is SendErrorKind.FORBIDDEN:
            self.note_error(f"send refused: {result.error}", errors.FORBIDDEN_HINT)
        log.warning("matrix send failed", extra={"kind": str(result.kind), "error": result.error})
        return result

    # -- operators --------------------------------------------------------------------------

    def note_error(self, error: str, hint: str) -> None:
        self.last_error = {"error": error, "hint": hint, "at": time.time()}

    def status(self) -> dict[str, Any]:
        detail: dict[str, Any] = {"user_id": self.me.user_id, "device_id": self.config.device_id}
        detail["e2ee"] = "on" if self.crypto else (self.e2ee_off_reason or "off")
        if self.intake is not None:
            detail["rooms_joined"] = len(self.intake.rooms.joined)
            detail["counters"] = dict(self.intake.counters)
            if self.intake.rooms.last_event_ts:
                detail["sync_lag_s"] = round(
                    max(0.0, time.time() - self.intake.rooms.last_event_ts), 1
                )
        if self.sync is not None:
            detail["sync_errors"] = self.sync.errors
            detail["last_sync_ok_s_ago"] = round(time.monotonic() - self.sync.last_ok, 1)
        joined = detail.get("rooms_joined", 0)
        detail["summary"] = f"{self.me.user_id}, {joined} rooms, e2ee {detail['e2ee']}"
        if self.last_error is not None:
            detail["last_error"] = dict(self.last_error)
        return detail

    def stale_after_s(self) -> float | None:
        return max(120.0, self.config.sync_timeout_s * 4)

    def idle_for_s(self) -> float | None:
        return time.monotonic() - self.sync.last_ok if self.sync is not None else None

    async def probe(self) -> bool:
        try:
            await asyncio.wait_for(self._client().whoami(), 10)
        except Exception:
            return False
        return True


def relates(target: Target) -> dict[str, Any]:
    """Every answer replies to the message it answers; in a thread it also joins the thread."""
    relation: dict[str, Any] = {}
    if target.reply_to:
        relation["m.in_reply_to"] = {"event_id": target.reply_to.split(":edit:")[0]}
    if target.thread_id:
        relation.update(rel_type="m.thread", event_id=target.thread_id, is_falling_back=False)
    return relation


__all__ = ["MatrixChannel"]
