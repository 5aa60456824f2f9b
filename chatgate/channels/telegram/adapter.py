"""The Telegram channel adapter (python-telegram-bot), polling or webhook mode."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from chatgate.channels.base import (
    ChannelContext,
    ChannelError,
    InboundSink,
    NotConfigured,
    Rendered,
)
from chatgate.channels.capabilities import Capabilities, chat_capabilities
from chatgate.channels.files import render_with_files, upload_of
from chatgate.channels.http_ingress import refuse
from chatgate.channels.tallies import TallyingAdapter
from chatgate.channels.telegram import LIMITS, errors
from chatgate.channels.telegram.albums import AddressedAlbums, album_of, merge_album
from chatgate.channels.telegram.config import TelegramChannelConfig
from chatgate.channels.telegram.ids import split_key
from chatgate.channels.telegram.inbound import (
    ALLOWED_UPDATES,
    UPDATE_PARSE_ERRORS,
    BotIdentity,
    Ignored,
    normalize,
)
from chatgate.channels.telegram.media import fetch_file
from chatgate.channels.telegram.polling import REJECTED_TOKEN, TOKEN_HINT, Poller
from chatgate.channels.telegram.render import render
from chatgate.channels.telegram.request import BoundedRequest
from chatgate.channels.words import words_for
from chatgate.config.base import secret_value
from chatgate.http_input import BadInput, read_json
from chatgate.model.errors import FetchError, StateUnavailable
from chatgate.model.messages import Attachment, InboundMessage, SendResult, Target
from chatgate.model.outbound import File, OutboundMessage
from chatgate.model.reasons import MediaReason, SendErrorKind
from chatgate.model.results import press_notice
from chatgate.presentation.chunking import utf16_len
from chatgate.secure_compare import secure_equals
from telegram import Bot, InputFile, ReactionTypeEmoji, ReplyParameters, Update
from telegram import error as tg
from telegram.constants import ChatAction, ParseMode

# File kind → Bot API method and its file field.
_UPLOADS = {
    "image": ("send_photo", "photo"),
    "document": ("send_document", "document"),
    "audio": ("send_audio", "audio"),
    "voice": ("send_voice", "voice"),
    "video": ("send_video", "video"),
}
log = logging.getLogger("chatgate.telegram")
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
TYPING_REFRESH_S = 4.0  # Telegram shows "typing…" for ~5 s per sendChatAction
MAX_UPDATE_BYTES = 1024 * 1024  # an update is a few kB; this bounds what a secret holder can send
CALLBACK_TEXT_MAX = 200  # answerCallbackQuery shows at most this many characters


class TelegramChannel(TallyingAdapter):
    platform = "telegram"

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: TelegramChannelConfig = ctx.config
        self.bot: Bot | None = None
        self.identity: BotIdentity | None = None
        self._sink: InboundSink | None = None
        self._poller: Poller | None = None
        self._webhook_path: str | None = None
        self._accepting = False
        self._last_update = time.monotonic()
        self._files_bot: Bot | None = None  # fetch-only, for files while another replica polls
        self._albums = AddressedAlbums(ctx.clock)

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        return self.capabilities_of(
            lambda config: chat_capabilities(
                config, LIMITS, length=utf16_len, typing_every_s=TYPING_REFRESH_S
            )
        )

    async def start(self, sink: InboundSink) -> None:
        self._sink = sink
        bot = await connect_bot(self.config)
        self.bot = bot
        self.identity = BotIdentity(bot.bot.id, bot.bot.username or "")
        if self.config.mode == "webhook":
            await self._start_webhook(bot)
        else:
            await bot.delete_webhook(drop_pending_updates=False)
            self._poller = Poller(
                lambda: make_bot(self.config, polling=True),
                self._handle_batch,
                self.fail,
                lambda metric: self.ctx.metrics.count(metric, channel=self.name),
                poll_timeout_s=self.config.poll_timeout_s,
                stale_after_s=self.config.stale_after_s,
                lease_left=self.ctx.lease.remaining_s,
            )
            self._poller.start()
        self._accepting = True
        log.info(
            "telegram connected", extra={"bot": self.identity.username, "mode": self.config.mode}
        )

    async def _start_webhook(self, bot: Bot) -> None:
        hook = self.config.webhook
        if not hook.public_url:
            raise NotConfigured(
                "webhook mode needs a public URL", "set channels.telegram.webhook.public_url"
            )
        self._webhook_path = hook.path
        self.ctx.http.add("POST", hook.path, self._webhook)
        await bot.set_webhook(
            url=hook.public_url.rstrip("/") + hook.path,
            secret_token=secret_value(hook.secret_token),
            allowed_updates=list(ALLOWED_UPDATES),
        )

    async def stop_intake(self) -> None:
        self._accepting = False
        if self._poller is not None:
            await self._poller.stop()
            self._poller = None

    async def stop(self) -> None:
        await self.stop_intake()
        if self._webhook_path is not None:
            self.ctx.http.remove(self._webhook_path)
            if self.bot is not None:
                with contextlib.suppress(tg.TelegramError):
                    await self.bot.delete_webhook()
            self._webhook_path = None
        if self.bot is not None:
            await _quiet_shutdown(self.bot)
            self.bot = None
        files, self._files_bot = self._files_bot, None
        if files is not None:
            with contextlib.suppress(Exception):
                await files.request.shutdown()

    def stale_after_s(self) -> float | None:
        return self.config.stale_after_s

    def idle_for_s(self) -> float | None:
        if self._poller is not None:
            return time.monotonic() - self._poller.last_success
        return time.monotonic() - self._last_update

    async def probe(self) -> bool:
        """getMe with a short timeout: proves the token and the API are reachable."""
        if self.bot is None:
            return False
        try:
            await self.bot.get_me(read_timeout=5, connect_timeout=5)
        except tg.TelegramError:
            return False
        return True

    def reconfigure(self, config: Any) -> None:
        super().reconfigure(config)
        self.config = config

    def status(self) -> dict[str, Any]:
        detail: dict[str, Any] = {
            "mode": self.config.mode,
            "bot": self.identity.username if self.identity else None,
        }
        if self._poller is not None:
            detail.update(poller_rebuilds=self._poller.rebuilds, poll_errors=self._poller.errors)
        detail.update(self.tallies())
        return detail

    # -- inbound ----------------------------------------------------------------------------

    async def _handle_batch(self, updates: tuple[Update, ...]) -> None:
        """Journal a batch: chats in parallel (their writes share commits), each chat in order."""
        by_chat: dict[int | None, list[Update]] = {}
        for update in updates:
            chat = update.effective_chat
            by_chat.setdefault(chat.id if chat is not None else None, []).append(update)
        await asyncio.gather(
            *(self._handle_in_order(chat_updates) for chat_updates in by_chat.values())
        )

    async def _handle_in_order(self, updates: list[Update]) -> None:
        """One chat's updates in order; the parts of an album in the batch are one message."""
        album: list[InboundMessage] = []
        for update in updates:
            msg = self._normalized(update)
            if msg is not None and album and album_of(msg) == album_of(album[-1]):
                album.append(msg)
                continue
            if album:
                await self._submit(merge_album(album))
                album = []
            if msg is not None and album_of(msg) is not None:
                album = [msg]
            elif msg is not None:
                await self._submit(msg)
        if album:
            await self._submit(merge_album(album))

    async def _handle_update(self, update: Update) -> None:
        msg = self._normalized(update)
        if msg is not None:
            await self._submit(msg)

    def _normalized(self, update: Update) -> InboundMessage | None:
        assert self._sink is not None and self.identity is not None
        self._last_update = time.monotonic()
        result = normalize(update, self.identity, self.name, edits=self.config.edits)
        if isinstance(result, Ignored):
            self.note_ignored(result.reason, result.chat_id, self._sink)
            return None
        return result

    async def _submit(self, msg: InboundMessage) -> None:
        assert self._sink is not None
        msg = self._albums.mark(msg)
        if msg.choice is None:
            await self._sink.submit(msg)
            return
        notice: str | None = None
        try:
            msg = await self.resolve_choice(msg)
            notice = press_notice(await self._sink.submit(msg))
        finally:
            await self._answer_button(msg, notice)

    async def _answer_button(self, msg: InboundMessage, notice: str | None) -> None:
        """Stop the button's spinner once the press is journaled; a refused press (an approval
        that is not the presser's) shows its notice to the presser only."""
        query_id = msg.extra.get("callback_query_id")
        if self.bot is not None and query_id:
            with contextlib.suppress(tg.TelegramError):
                await self.bot.answer_callback_query(
                    str(query_id), text=notice[:CALLBACK_TEXT_MAX] if notice else None
                )

    async def _webhook(self, request: web.Request) -> web.Response:
        expected = secret_value(self.config.webhook.secret_token)
        given = request.headers.get(SECRET_HEADER, "")
        if expected is not None and not secure_equals(given, expected):
            log.warning(
                "telegram webhook with a wrong secret token", extra={"peer": request.remote}
            )
            return web.json_response({"error": "forbidden"}, status=403)
        if not self._accepting or self.bot is None:
            return refuse("shutting down")
        try:
            data = await read_json(request, MAX_UPDATE_BYTES)
        except BadInput as bad:
            return bad.answer()
        try:
            if not isinstance(data, dict):
                raise TypeError("an update is a JSON object")
            update = Update.de_json(data, self.bot)
        except UPDATE_PARSE_ERRORS:
            return web.json_response({"error": "not a Telegram update"}, status=400)
        if update is not None:
            try:
                await self._handle_update(update)  # journaled before we answer 200
            except StateUnavailable:  # not journaled: Telegram re-sends on a non-2xx answer
                return refuse("cannot store updates right now")
        return web.json_response({"ok": True})

    # -- outbound ---------------------------------------------------------------------------

    def render(self, message: OutboundMessage) -> list[Rendered]:
        words = words_for(self.ctx.kv, self.name)
        return render_with_files(
            message, lambda m: render(m, shorten=self.shorten_choice, words=words)
        )

    def _bot(self) -> Bot:
        if self.bot is None:
            raise tg.NetworkError("telegram channel is not connected")
        return self.bot

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        kwargs = self._address(target)
        upload = upload_of(rendered)
        if upload is not None:
            return await self._send_file(kwargs, *upload)
        markup = rendered.native.get("reply_markup")
        try:
            sent = await self._bot().send_message(
                text=rendered.text, parse_mode=ParseMode.HTML, reply_markup=markup, **kwargs
            )
        except tg.ChatMigrated as exc:
            return SendResult(
                False,
                kind=SendErrorKind.TRANSIENT,
                error="chat migrated",
                moved_to=Target(target.channel, str(exc.new_chat_id), target.thread_id),
            )
        except tg.BadRequest as exc:
            if not errors.is_parse_error(exc):
                raise
            log.warning(
                "Telegram could not parse our HTML; resending as plain text",
                extra={"chat": target.chat_id},
            )
            sent = await self._bot().send_message(
                text=str(rendered.native.get("plain") or rendered.text),
                reply_markup=markup,
                **kwargs,
            )
        except tg.InvalidToken:
            self.fail(
                ChannelError(
                    "the bot token was revoked", kind=SendErrorKind.AUTH_FATAL, hint=TOKEN_HINT
                )
            )
            raise
        return SendResult.sent(str(sent.message_id))

    async def _send_file(self, kwargs: dict[str, Any], file: File, data: bytes) -> SendResult:
        """sendPhoto / sendDocument / sendAudio / sendVoice / sendVideo, multipart over the same
        transport as every other call."""
        method, field = _UPLOADS.get(file.kind, _UPLOADS["document"])
        body = InputFile(data, filename=file.name)
        caption = {"caption": file.caption} if file.caption else {}
        sent = await getattr(self._bot(), method)(**{field: body}, **caption, **kwargs)
        return SendResult.sent(str(sent.message_id))

    async def edit(self, target: Target, message_id: str, rendered: Rendered) -> SendResult:
        try:
            await self._bot().edit_message_text(
                text=rendered.text,
                chat_id=int(target.chat_id),
                message_id=int(message_id),
                parse_mode=ParseMode.HTML,
                reply_markup=rendered.native.get("reply_markup"),
            )
        except tg.BadRequest as exc:
            if errors.is_not_modified(exc):
                return SendResult.sent(message_id)
            if not errors.is_parse_error(exc):
                return self.classify_error(exc)
            await self._bot().edit_message_text(
                text=str(rendered.native.get("plain") or rendered.text),
                chat_id=int(target.chat_id),
                message_id=int(message_id),
                reply_markup=rendered.native.get("reply_markup"),
            )
        except tg.TelegramError as exc:
            return self.classify_error(exc)
        return SendResult.sent(message_id)

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        """getFile + download with the token: works on any replica, also while another one
        polls (then through a fetch-only bot made on first use: no getUpdates, no webhook)."""
        bot = self.bot
        if bot is None:
            bot = self._files_bot
            if bot is None:
                try:
                    bot = self._files_bot = make_bot(self.config, fetch_only=True)
                except NotConfigured:
                    raise FetchError(MediaReason.DOWNLOAD_FAILED, "no bot token") from None
        return await fetch_file(bot, attachment, dest, max_bytes)

    async def typing(self, target: Target) -> None:
        """The typing hint, unless every send slot is busy: queued behind replies it would show
        late (after the answer, in a burst) and hold replies back; the next refresh tries again."""
        bot = self._bot()
        request = bot.request
        if isinstance(request, BoundedRequest) and request.saturated():
            return
        thread = int(target.thread_id) if target.thread_id else None
        await bot.send_chat_action(int(target.chat_id), ChatAction.TYPING, message_thread_id=thread)

    async def react(self, target: Target, message_id: str, emoji: str) -> None:
        parsed = split_key(message_id)
        mid = parsed[1] if parsed else int(message_id)
        await self._bot().set_message_reaction(int(target.chat_id), mid, [ReactionTypeEmoji(emoji)])

    async def acknowledge(self, msg: InboundMessage) -> None:
        if (
            self.config.ack_reaction
            and msg.reply_target is not None
            and split_key(msg.message_id) is not None
        ):
            with contextlib.suppress(tg.TelegramError):
                await self.react(msg.reply_target, msg.message_id, self.config.ack_reaction)

    def classify_error(self, exc: BaseException) -> SendResult:
        return errors.classify(exc)

    @staticmethod
    def _address(target: Target) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"chat_id": int(target.chat_id)}
        if target.thread_id:
            kwargs["message_thread_id"] = int(target.thread_id)
        parsed = split_key(target.reply_to) if target.reply_to else None
        if parsed is not None:
            kwargs["reply_parameters"] = ReplyParameters(
                message_id=parsed[1], allow_sending_without_reply=True
            )
        return kwargs


def make_bot(
    config: TelegramChannelConfig, *, polling: bool = False, fetch_only: bool = False
) -> Bot:
    """A PTB Bot for ``config`` (not yet initialised); the poller gets its own small pool. A
    polling or fetch-only bot sends every call through one transport, so
    ``bot.request.shutdown()`` closes all of it (`Bot.shutdown` skips a bot never initialised,
    as a fetch-only one is)."""
    token = secret_value(config.token)
    if token is None:
        raise NotConfigured(
            "no bot token", "set channels.telegram.token (from @BotFather) or token_file"
        )
    base = config.api_base.rstrip("/")
    timeout = config.request_timeout_s
    request = BoundedRequest(
        slots=2 if polling else config.send_concurrency,
        timeout_s=timeout,
        connect_timeout_s=min(timeout, 10.0),
    )
    return Bot(
        token,
        base_url=f"{base}/bot",
        base_file_url=f"{base}/file/bot",
        request=request,
        get_updates_request=request if polling or fetch_only else None,
    )


async def connect_bot(config: TelegramChannelConfig) -> Bot:
    """An initialised Bot (getMe proved the token), or a ChannelError saying what to fix."""
    bot = make_bot(config)
    try:
        await bot.initialize()
    except tg.InvalidToken:  # its message quotes the token: never pass it on
        await _quiet_shutdown(bot)
        raise ChannelError(
            REJECTED_TOKEN,
            kind=SendErrorKind.AUTH_FATAL,
            hint=TOKEN_HINT,
        ) from None
    except tg.TelegramError as exc:
        await _quiet_shutdown(bot)
        raise ChannelError(
            f"Telegram is unreachable: {exc}",
            kind=SendErrorKind.TRANSIENT,
            hint=f"check network access to {config.api_base}",
        ) from None
    return bot


async def _quiet_shutdown(bot: Bot) -> None:
    with contextlib.suppress(Exception):
        await bot.shutdown()


__all__ = ["TelegramChannel"]
