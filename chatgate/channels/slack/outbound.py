"""Sending to Slack: rendered messages become chat.postMessage / chat.update calls, reactions.

Every answer goes to the thread its conversation lives in (`Target.thread_id` is a thread_ts).
A failure is classified once (`errors.classify`) and remembered with its fix for `chatgate
status`; a rejected token parks the channel, `msg_too_long` splits the message and sends both
halves. Slack has no typing indicator for bots: a turn under way shows as the ack reaction.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from typing import Any

from slack_sdk.errors import SlackClientError

from chatgate import tracing
from chatgate.channels.base import ChannelContext, ChannelError, Rendered
from chatgate.channels.files import render_with_files, upload_of
from chatgate.channels.slack import errors
from chatgate.channels.slack.config import SlackChannelConfig
from chatgate.channels.slack.inbound import message_key, ts_of
from chatgate.channels.slack.render import render, split_rendered
from chatgate.channels.tallies import TallyingAdapter
from chatgate.channels.words import words_for
from chatgate.model.messages import InboundMessage, SendResult, Target
from chatgate.model.outbound import File, OutboundMessage
from chatgate.model.reasons import SendErrorKind

log = logging.getLogger("chatgate.slack")
ENGAGED_MAX = 10_000  # threads remembered as "the bot answered here" (replies need no mention)
ANSWERS_KEPT = 4096  # answers a reaction can still be recognised on, with their thread
MAX_SPLITS = 4  # msg_too_long: halve at most this many times


class SlackOutbound(TallyingAdapter):
    """The sending half of the adapter; `SlackChannel` adds the connection on top."""

    config: SlackChannelConfig

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.web: Any = None  # slack_sdk AsyncWebClient once started
        self.engaged: OrderedDict[str, None] = OrderedDict()
        self.answers: OrderedDict[str, str | None] = OrderedDict()  # answer key -> thread_ts

    def engage(self, chat_id: str, thread_ts: str | None) -> None:
        if thread_ts:
            key = f"{chat_id}:{thread_ts}"
            self.engaged[key] = None
            self.engaged.move_to_end(key)
            while len(self.engaged) > ENGAGED_MAX:
                self.engaged.popitem(last=False)

    async def tell_privately(self, msg: InboundMessage, text: str) -> bool:
        """An ephemeral message only the sender sees (chat.postEphemeral), in their thread."""
        if self.web is None:
            return False
        try:
            await self.web.chat_postEphemeral(
                channel=msg.chat_id, user=msg.sender_id, text=text, thread_ts=msg.thread_id
            )
        except (SlackClientError, OSError, TimeoutError) as exc:
            log.warning(
                "could not tell a Slack user privately", extra={"error": type(exc).__name__}
            )
            return False
        return True

    async def tell_presser(self, msg: InboundMessage, notice: str) -> None:
        """A refused press (an approval that is not theirs): an ephemeral message only the
        presser sees, in the conversation of the pressed message."""
        if self.web is None:
            return
        try:
            await self.web.chat_postEphemeral(
                channel=msg.chat_id, user=msg.sender_id, text=notice, thread_ts=msg.thread_id
            )
        except (SlackClientError, OSError, TimeoutError) as exc:
            log.warning(
                "could not tell a Slack user their press was refused",
                extra={"error": type(exc).__name__},
            )

    # -- rendering --------------------------------------------------------------------------

    def render(self, message: OutboundMessage) -> list[Rendered]:
        words = words_for(self.ctx.kv, self.name)
        return render_with_files(
            message, lambda m: render(m, shorten=self.shorten_choice, words=words)
        )

    # -- Web API calls ------------------------------------------------------------------------

    def _client(self) -> Any:
        if self.web is None:
            raise ConnectionError("the Slack channel is not connected")
        return self.web

    async def _call(self, method: str, **params: Any) -> Any:
        """One Web API call by its SDK method ("chat.postMessage" → `chat_postMessage`); a
        rejected token parks the channel (the caller still classifies the failure)."""
        call = getattr(self._client(), method.replace(".", "_"))
        try:
            with tracing.span(f"slack {method}", kind="client", inside=True, leaf=True):
                return await call(**params)
        except Exception as exc:
            found = errors.api_error(exc)
            if found is not None and found[1] in errors.AUTH_ERRORS:
                self.fail(
                    ChannelError(
                        f"Slack rejected the bot token ({found[1]})",
                        kind=SendErrorKind.AUTH_FATAL,
                        hint=errors.TOKEN_HINT,
                    )
                )
            raise

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        upload = upload_of(rendered)
        if upload is not None:
            return await self._upload(target, *upload)
        params: dict[str, Any] = {"channel": target.chat_id, "text": rendered.text}
        if target.thread_id:
            params["thread_ts"] = target.thread_id
        blocks = rendered.native.get("blocks") or ()
        if blocks:
            params["blocks"] = list(blocks)
        try:
            answer = await self._call("chat.postMessage", **params)
        except Exception as exc:
            if errors.is_error(exc, errors.MSG_TOO_LONG):
                return await self._send_split(target, rendered)
            raise
        self.engage(target.chat_id, target.thread_id or None)
        key = message_key(target.chat_id, str(answer["ts"]))
        self.answers[key] = target.thread_id or None
        if len(self.answers) > ANSWERS_KEPT:
            self.answers.popitem(last=False)
        return SendResult.sent(key)

    async def _upload(self, target: Target, file: File, data: bytes) -> SendResult:
        """files_upload_v2: an upload URL, the bytes, then the share into the chat or thread."""
        params: dict[str, Any] = {"channel": target.chat_id, "content": data, "filename": file.name}
        if target.thread_id:
            params["thread_ts"] = target.thread_id
        if file.caption:
            params["initial_comment"] = file.caption
        answer = await self._call("files_upload_v2", **params)
        self.engage(target.chat_id, target.thread_id or None)
        uploaded = answer.get("files") or [answer.get("file") or {}]
        return SendResult.sent(str(uploaded[0].get("id", "")))

    async def _send_split(self, target: Target, rendered: Rendered, depth: int = 0) -> SendResult:
        """Slack measured the message as too long (its count differs from ours): halve it."""
        if depth >= MAX_SPLITS:
            return SendResult.failed(SendErrorKind.INVALID_REQUEST, errors.MSG_TOO_LONG)
        ids: list[str] = []
        for part in split_rendered(rendered):
            try:
                result = await self.send(target, part)
            except Exception as exc:
                if not errors.is_error(exc, errors.MSG_TOO_LONG):
                    raise
                result = await self._send_split(target, part, depth + 1)
            if not result.ok:
                return result
            ids.extend(result.message_ids)
        return SendResult.sent(*ids)

    async def edit(self, target: Target, message_id: str, rendered: Rendered) -> SendResult:
        ts = ts_of(message_id)
        if ts is None:
            return SendResult.failed(SendErrorKind.INVALID_REQUEST, "not a message id")
        params: dict[str, Any] = {"channel": target.chat_id, "ts": ts, "text": rendered.text}
        params["blocks"] = list(rendered.native.get("blocks") or ())
        try:
            await self._call("chat.update", **params)
        except Exception as exc:
            if errors.is_error(exc, "message_not_found", "cant_update_message"):
                return await self.send(target, rendered)  # the draft is gone: post anew
            return self.classify_error(exc)
        return SendResult.sent(message_id)

    async def react(self, target: Target, message_id: str, emoji: str) -> None:
        ts = ts_of(message_id)
        if ts is not None:
            await self._reaction("reactions.add", target.chat_id, ts, emoji)

    async def _reaction(self, method: str, chat_id: str, ts: str, name: str) -> None:
        try:
            await self._call(method, channel=chat_id, timestamp=ts, name=name.strip(":"))
        except Exception as exc:
            if not errors.is_error(exc, "already_reacted", "no_reaction"):
                raise

    async def acknowledge(self, msg: InboundMessage) -> None:
        emoji, ts = self.config.ack_reaction, ts_of(msg.message_id)
        if emoji and ts is not None:
            with contextlib.suppress(Exception):
                await self._reaction("reactions.add", msg.chat_id, ts, emoji)

    async def acknowledge_done(self, msg: InboundMessage, *, failed: bool) -> None:
        """Swap the ack reaction for the done (or failed) mark."""
        ack, ts = self.config.ack_reaction, ts_of(msg.message_id)
        if not ack or ts is None:
            return
        mark = self.config.failed_reaction if failed else self.config.done_reaction
        with contextlib.suppress(Exception):
            await self._reaction("reactions.remove", msg.chat_id, ts, ack)
            if mark:
                await self._reaction("reactions.add", msg.chat_id, ts, mark)

    def classify_error(self, exc: BaseException) -> SendResult:
        result = errors.classify(exc)
        kind = result.kind or SendErrorKind.UNKNOWN
        self.note_error(f"send failed: {kind.value}: {result.error}", errors.hint_for(result))
        log.warning("slack send failed", extra={"kind": kind.value, "error": result.error})
        return result
