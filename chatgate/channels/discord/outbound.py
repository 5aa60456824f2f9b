"""Sending to Discord: rendered specs become discord.py messages, edits, typing and reactions.

Every call addresses a channel by id (`get_partial_messageable`), so nothing depends on the
cache; a thread is addressed by its own id. Only the first message of a reply quotes the
trigger. A failure is classified once (`errors.classify`) and remembered, with its fix, for
`chatgate status`; a 401 parks the channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections import deque
from typing import Any

import discord
from chatgate import tracing
from chatgate.channels.base import ChannelContext, ChannelError, Rendered
from chatgate.channels.discord import errors
from chatgate.channels.discord.config import DiscordChannelConfig
from chatgate.channels.discord.ids import snowflake
from chatgate.channels.discord.render import ButtonSpec, EmbedSpec, Row, SelectSpec, render
from chatgate.channels.files import render_with_files, upload_of
from chatgate.channels.tallies import TallyingAdapter
from chatgate.channels.words import words_for
from chatgate.model.messages import InboundMessage, SendResult, Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import SendErrorKind

SEND_HINTS = {
    SendErrorKind.FORBIDDEN: (
        "give the bot View Channel, Send Messages, Send Messages in Threads and Embed Links in "
        "that channel (Server Settings → Roles, or the channel's permissions); the undelivered "
        "reply is in `chatgate dlq list`"
    ),
    SendErrorKind.TARGET_NOT_FOUND: (
        "the channel, thread or message was deleted; the reply is in `chatgate dlq list`"
    ),
    SendErrorKind.RATE_LIMITED: "Discord asked chatgate to slow down; replies wait and retry",
    SendErrorKind.AUTH_FATAL: errors.TOKEN_HINT,
    SendErrorKind.TRANSIENT: errors.NETWORK_HINT,
}
_BUTTON_STYLES = {
    "primary": discord.ButtonStyle.primary,
    "secondary": discord.ButtonStyle.secondary,
    "danger": discord.ButtonStyle.danger,
    "link": discord.ButtonStyle.link,
}


ANSWERS_KEPT = 4096  # answers a reaction is recognised on when Discord does not name the author


class DiscordOutbound(TallyingAdapter):
    """The sending half of the adapter; `DiscordChannel` adds the gateway on top."""

    config: DiscordChannelConfig

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.client: discord.AutoShardedClient | None = None
        self.answers: set[int] = set()  # ids this process sent (reactions on them count)
        self._answer_order: deque[int] = deque()

    # -- rendering --------------------------------------------------------------------------

    def render(self, message: OutboundMessage) -> list[Rendered]:
        return render_with_files(
            message,
            lambda m: render(
                m,
                max_lines=self.config.max_lines,
                shorten=self.shorten_choice,
                words=words_for(self.ctx.kv, self.name),
            ),
        )

    # -- sending ----------------------------------------------------------------------------

    def _channel(self, target: Target) -> discord.PartialMessageable:
        if self.client is None or self.client.is_closed():
            raise ConnectionError("the Discord channel is not connected")
        return self.client.get_partial_messageable(int(target.thread_id or target.chat_id))

    async def _call(self, call: Any, method: str) -> Any:
        """One REST call (``method``: its name in Discord's API reference, for its span)."""
        try:
            with tracing.span(f"discord {method}", kind="client", inside=True, leaf=True):
                return await asyncio.wait_for(call, self.config.request_timeout_s)
        except discord.HTTPException as exc:
            if exc.status == 401:
                self.fail(
                    ChannelError(
                        errors.REJECTED_TOKEN, kind=SendErrorKind.AUTH_FATAL, hint=errors.TOKEN_HINT
                    )
                )
            raise

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        channel = self._channel(target)
        reply_to = snowflake(target.reply_to) if rendered.native.get("reply", True) else None
        reference = (
            discord.MessageReference(
                message_id=reply_to, channel_id=channel.id, fail_if_not_exists=False
            )
            if reply_to is not None
            else None
        )
        upload = upload_of(rendered)
        if upload is not None:
            file, data = upload
            payload: dict[str, Any] = {
                "content": file.caption or None,
                "file": discord.File(io.BytesIO(data), filename=file.name),
            }
        else:
            payload = _payload(rendered)
        if reference is not None:
            payload["reference"] = reference
        sent = await self._call(channel.send(**payload), "createMessage")
        self._remember(sent.id)
        return SendResult.sent(str(sent.id))

    def _remember(self, message_id: int) -> None:
        self.answers.add(message_id)
        self._answer_order.append(message_id)
        if len(self._answer_order) > ANSWERS_KEPT:
            self.answers.discard(self._answer_order.popleft())

    async def edit(self, target: Target, message_id: str, rendered: Rendered) -> SendResult:
        message = self._channel(target).get_partial_message(int(message_id))
        payload = _payload(rendered)
        payload.setdefault("view", None)
        try:
            await self._call(message.edit(**payload), "editMessage")
        except discord.NotFound as exc:
            if errors.is_unknown_message(exc):  # the draft was deleted: post the text anew
                return await self.send(replace_reply(target), rendered)
            return self.classify_error(exc)
        except Exception as exc:
            return self.classify_error(exc)
        return SendResult.sent(message_id)

    async def typing(self, target: Target) -> None:
        await self._call(self._channel(target).typing(), "triggerTypingIndicator")

    async def react(self, target: Target, message_id: str, emoji: str) -> None:
        message = self._channel(target).get_partial_message(int(message_id))
        await self._call(message.add_reaction(emoji), "createReaction")

    async def acknowledge(self, msg: InboundMessage) -> None:
        emoji = self.config.ack_reaction
        if emoji and msg.reply_target is not None and snowflake(msg.message_id) is not None:
            with contextlib.suppress(Exception):
                await self.react(msg.reply_target, msg.message_id, emoji)

    def classify_error(self, exc: BaseException) -> SendResult:
        result = errors.classify(exc)
        kind = result.kind or SendErrorKind.UNKNOWN
        self.note_error(f"send failed: {kind.value}: {result.error}", SEND_HINTS.get(kind, ""))
        return result


def replace_reply(target: Target) -> Target:
    return Target(target.channel, target.chat_id, target.thread_id)


def _payload(rendered: Rendered) -> dict[str, Any]:
    payload: dict[str, Any] = {"content": rendered.text or None}
    embeds: tuple[EmbedSpec, ...] = rendered.native.get("embeds", ())
    if embeds:
        payload["embeds"] = [_embed(spec) for spec in embeds]
    rows: tuple[Row, ...] = rendered.native.get("rows", ())
    if rows:
        payload["view"] = _view(rows)
    return payload


def _embed(spec: EmbedSpec) -> discord.Embed:
    embed = discord.Embed(description=spec.description or None)
    if spec.image_url:
        embed.set_image(url=spec.image_url)
    if spec.footer:
        embed.set_footer(text=spec.footer)
    return embed


def _view(rows: tuple[Row, ...]) -> discord.ui.View:
    """Components only: chatgate handles presses itself (on_interaction), so the view is
    stopped before sending and never enters discord.py's view store."""
    view = discord.ui.View(timeout=None)
    for index, row in enumerate(rows):
        if isinstance(row, SelectSpec):
            view.add_item(
                discord.ui.Select(
                    custom_id=row.custom_id,
                    placeholder=row.placeholder,
                    options=[
                        discord.SelectOption(label=label, value=value)
                        for label, value in row.options
                    ],
                    row=index,
                )
            )
            continue
        for spec in row:
            view.add_item(_button(spec, index))
    view.stop()
    return view


def _button(spec: ButtonSpec, row: int) -> discord.ui.Button[discord.ui.View]:
    style = _BUTTON_STYLES.get(spec.style, discord.ButtonStyle.secondary)
    if spec.url:
        return discord.ui.Button(label=spec.label, style=style, url=spec.url, row=row)
    return discord.ui.Button(label=spec.label, style=style, custom_id=spec.custom_id, row=row)
