"""The Discord channel adapter (discord.py): gateway lifecycle, inbound events, status.

discord.py keeps the gateway alive (heartbeats, RESUME after a drop, a fresh IDENTIFY when the
session is invalid); chatgate watches it. The connection task ending with a fatal close code
parks the channel with a fix hint; any other end restarts it through the supervisor's ladder,
as does a connection that hears nothing for `stale_after_s` and fails a REST probe. Discord
never redelivers a gateway event, so each message is journaled the moment it arrives (also while
draining) and answered from the journal after a crash. Sending lives in `outbound.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp

import discord
from chatgate.channels.base import ChannelContext, ChannelError, InboundSink, NotConfigured
from chatgate.channels.capabilities import Capabilities, chat_capabilities
from chatgate.channels.discord import LIMITS, errors
from chatgate.channels.discord.client import GatewayClient, privileged
from chatgate.channels.discord.config import DiscordChannelConfig
from chatgate.channels.discord.inbound import (
    BotIdentity,
    Ignored,
    message_facts,
    normalize,
    normalize_edit,
    normalize_press,
    normalize_reaction,
    press_facts,
    reaction_facts,
)
from chatgate.channels.discord.media import fetch_attachment
from chatgate.channels.discord.net import build_connector
from chatgate.channels.discord.outbound import DiscordOutbound
from chatgate.channels.download import FilesSession, files_timeout
from chatgate.channels.ordering import ChatOrder
from chatgate.config.base import secret_value
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import USER_LANGUAGE, Attachment, InboundMessage
from chatgate.model.reasons import DropReason, SendErrorKind
from chatgate.model.results import Submission, press_notice
from chatgate.policies.edits import EditMode
from chatgate.policies.reactions import ReactionMode
from chatgate.presentation.chunking import utf16_len

log = logging.getLogger("chatgate.discord")
TYPING_REFRESH_S = 8.0  # Discord shows "typing…" for ~10 s per trigger
PROBE_TIMEOUT_S = 10.0
LOCALES_KEPT = 10_000  # users whose language an interaction told us (messages carry none)
INTERACTIONS_KEPT = 1_000  # recent presses: a budget notice can still reach the presser alone
INTERACTION_TOKEN_S = 14 * 60.0  # an interaction's token takes follow-ups for 15 minutes
NO_TOKEN_HINT = (
    "set channels.discord.token (Developer Portal → your application → Bot → Reset Token) "
    "or token_file"
)


class DiscordChannel(DiscordOutbound):
    COUNTERS = ("identify", "resume", "disconnect", "connect")
    platform = "discord"

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: DiscordChannelConfig = ctx.config
        self.identity: BotIdentity | None = None
        self._sink: InboundSink | None = None
        self._runner: asyncio.Task[BaseException | None] | None = None
        self._ready = asyncio.Event()
        self._stopping = False
        self._last_event = time.monotonic()
        self._order = ChatOrder()  # discord.py runs each event in its own task
        self._files = FilesSession(self._files_session)  # CDN files, on any replica
        self.locales: OrderedDict[str, str] = OrderedDict()  # user id -> their Discord locale
        # interaction id -> (the press, when it came): an ephemeral follow-up's way to a user
        self.interactions: OrderedDict[str, tuple[discord.Interaction, float]] = OrderedDict()

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        return self.capabilities_of(
            lambda config: chat_capabilities(
                config, LIMITS, length=utf16_len, typing_every_s=TYPING_REFRESH_S
            )
        )

    async def start(self, sink: InboundSink) -> None:
        token = secret_value(self.config.token)
        if token is None:
            raise NotConfigured("no bot token", NO_TOKEN_HINT)
        self._sink, self._stopping = sink, False
        self._ready = asyncio.Event()
        client = self.client = GatewayClient(self, self.config)
        timeout = self.config.connect_timeout_s
        try:
            await asyncio.wait_for(client.login(token), timeout)
            assert client.user is not None
            self.identity = BotIdentity(client.user.id, client.user.name)
            self._runner = asyncio.create_task(self._run(client), name="discord-gateway")
            ready = asyncio.ensure_future(self._ready.wait())
            await asyncio.wait(
                {ready, self._runner}, timeout=timeout, return_when="FIRST_COMPLETED"
            )
            ready.cancel()
            if self._runner.done():
                raise self._runner.result() or ChannelError("the Discord gateway closed at once")
            if not self._ready.is_set():
                raise ChannelError(
                    f"no READY from the Discord gateway within {timeout:.0f} s",
                    kind=SendErrorKind.TRANSIENT,
                    hint=errors.NETWORK_HINT,
                )
        except BaseException as exc:
            await self._close()
            if isinstance(exc, asyncio.CancelledError):
                raise
            error = errors.gateway_exit(exc, privileged(self.config))
            self.note_error(str(error), error.hint)
            raise error from None
        self._last_event = time.monotonic()
        log.info(
            "discord connected",
            extra={
                "bot": self.identity.name,
                "shards": client.shard_count,
                "guilds": len(client.guilds),
            },
        )

    async def _run(self, client: GatewayClient) -> ChannelError | None:
        """The gateway connection; what ended it is reported to the supervisor once running."""
        outcome: ChannelError | None = None
        try:
            await client.connect(reconnect=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not isinstance(exc, discord.DiscordException | OSError | aiohttp.ClientError):
                log.exception("discord.py stopped on an unexpected error")
            outcome = errors.gateway_exit(exc, privileged(self.config))
        else:
            if not self._stopping:
                outcome = ChannelError(
                    "the Discord gateway connection ended", kind=SendErrorKind.TRANSIENT
                )
        if outcome is not None and self._ready.is_set() and not self._stopping:
            self.note_error(str(outcome), outcome.hint)
            log.error("discord gateway ended", extra={"error": str(outcome), "hint": outcome.hint})
            self.fail(outcome)
        return outcome

    async def stop(self) -> None:
        self._stopping = True
        await self._close()
        await self._files.close()

    async def _close(self) -> None:
        client, runner = self.client, self._runner
        self.client, self._runner = None, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()
        if runner is not None and not runner.done():
            runner.cancel()
            with contextlib.suppress(BaseException):
                await runner

    def stale_after_s(self) -> float | None:
        return self.config.stale_after_s

    def idle_for_s(self) -> float | None:
        return time.monotonic() - self._last_event

    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int:
        """Also on a replica where another holds the gateway connection (no shard opened)."""
        return await fetch_attachment(self._files.get(), attachment, dest, max_bytes)

    def _files_session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            connector=build_connector(self.config),
            timeout=files_timeout(self.config.request_timeout_s),
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def probe(self) -> bool:
        """Every shard's socket open and a REST call answered."""
        client = self.client
        if client is None or client.is_closed() or self.identity is None:
            return False
        if any(shard.is_closed() for shard in client.shards.values()):
            return False
        try:
            await asyncio.wait_for(client.fetch_user(self.identity.id), PROBE_TIMEOUT_S)
        except (discord.DiscordException, OSError, TimeoutError):
            return False
        return True

    def reconfigure(self, config: Any) -> None:
        super().reconfigure(config)
        self.config = config

    def status(self) -> dict[str, Any]:
        client = self.client
        shards = (
            [
                {"id": sid, "open": not info.is_closed(), "latency_ms": _ms(info.latency)}
                for sid, info in sorted(client.shards.items())
            ]
            if client is not None
            else []
        )
        guilds = len(client.guilds) if client is not None else 0
        latency = _ms(client.latency) if client is not None else None
        detail: dict[str, Any] = {
            "bot": self.identity.name if self.identity else None,
            "shards": shards,
            "guilds": guilds,
            "latency_ms": latency,
            "gateway": dict(self.counters),
            "summary": f"@{self.identity.name if self.identity else '?'} · {len(shards)} "
            f"shard{'s' * (len(shards) != 1)} · {guilds} guild{'s' * (guilds != 1)} · latency "
            + (f"{latency} ms" if latency is not None else "-"),
        }
        detail.update(self.tallies())
        return detail

    # -- events from the client ---------------------------------------------------------------

    def heard(self) -> None:
        self._last_event = time.monotonic()

    def ready(self) -> None:
        self._ready.set()

    def shard_event(self, kind: str, shard_id: int) -> None:
        self.count(kind)
        self.ctx.metrics.count(f"discord_shard_{kind}", channel=self.name)
        log.info("discord shard %s", kind, extra={"shard": shard_id})

    async def on_message(self, message: discord.Message) -> None:
        if self._sink is None or self.identity is None:
            return
        result = normalize(
            message_facts(message), self.identity, self.name, frozenset(self.config.allowed_guilds)
        )
        await self._submit(result)

    async def on_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        """An edit per the channel's `edits` (an embed resolving under a link is no edit)."""
        if self._sink is None or self.identity is None:
            return
        mode = EditMode(self.config.edits)
        if mode is EditMode.IGNORE or not payload.data.get("edited_timestamp"):
            if payload.data.get("edited_timestamp"):
                self._ignore(Ignored(DropReason.EDITED_IGNORED, str(payload.channel_id)))
            return
        result = normalize_edit(
            message_facts(payload.message),
            self.identity,
            self.name,
            frozenset(self.config.allowed_guilds),
            mode,
        )
        await self._submit(result)

    async def on_reaction(self, payload: discord.RawReactionActionEvent) -> None:
        """A reaction per the channel's `reactions` (only on the bot's own answers)."""
        if self._sink is None or self.identity is None or self.client is None:
            return
        facts = reaction_facts(payload, self.client.get_channel(payload.channel_id))
        result = normalize_reaction(
            facts,
            self.identity,
            self.name,
            frozenset(self.config.allowed_guilds),
            ReactionMode(self.config.reactions),
            self.answers,
        )
        await self._submit(result)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Acknowledged at once (Discord allows 3 s) while the press is journaled."""
        if self._sink is None:
            return
        result = normalize_press(
            press_facts(interaction), self.name, frozenset(self.config.allowed_guilds)
        )
        if interaction.type is not discord.InteractionType.component:
            self._ignore(
                result
                if isinstance(result, Ignored)
                else Ignored(DropReason.UNSUPPORTED_INTERACTION)
            )
            return
        ack = asyncio.ensure_future(self._defer(interaction))
        self._keep(interaction)
        notice: str | None = None
        try:
            if isinstance(result, InboundMessage):
                result = await self.resolve_choice(result)
            submission = await self._submit(result)
            notice = press_notice(submission) if submission is not None else None
        finally:
            await ack
        if notice:
            await self._tell_presser(interaction, notice)

    async def _defer(self, interaction: discord.Interaction) -> None:
        try:
            await interaction.response.defer()
        except (discord.DiscordException, OSError) as exc:
            log.warning(
                "could not acknowledge a Discord interaction", extra={"error": type(exc).__name__}
            )

    async def _tell_presser(self, interaction: discord.Interaction, notice: str) -> None:
        """A refused press (an approval that is not theirs): an ephemeral follow-up only the
        presser sees."""
        try:
            await interaction.followup.send(notice, ephemeral=True)
        except (discord.DiscordException, OSError) as exc:
            log.warning(
                "could not tell a Discord user their press was refused",
                extra={"error": type(exc).__name__},
            )

    def _keep(self, interaction: discord.Interaction) -> None:
        self.interactions[str(interaction.id)] = (interaction, time.monotonic())
        self.interactions.move_to_end(str(interaction.id))
        while len(self.interactions) > INTERACTIONS_KEPT:
            self.interactions.popitem(last=False)

    async def tell_privately(self, msg: InboundMessage, text: str) -> bool:
        """An ephemeral follow-up only the sender sees. Discord has them for interactions only:
        a press this replica received, while its token lives (15 minutes); for a plain message
        False, so the notice goes as a reply to it."""
        kept = self.interactions.get(str(msg.extra.get("interaction_id") or ""))
        if kept is None or time.monotonic() - kept[1] > INTERACTION_TOKEN_S:
            return False
        interaction = kept[0]
        try:
            await self._call(interaction.followup.send(text, ephemeral=True), "createFollowup")
        except (discord.DiscordException, OSError, TimeoutError) as exc:
            log.warning(
                "could not tell a Discord user privately", extra={"error": type(exc).__name__}
            )
            return False
        return True

    def _language(self, msg: InboundMessage) -> InboundMessage:
        """Discord tells a user's locale only with their interactions: remember the latest
        (bounded) and apply it to their messages too."""
        told = msg.extra.get(USER_LANGUAGE)
        if isinstance(told, str) and told:
            self.locales[msg.sender_id] = told
            self.locales.move_to_end(msg.sender_id)
            while len(self.locales) > LOCALES_KEPT:
                self.locales.popitem(last=False)
            return msg
        known = self.locales.get(msg.sender_id)
        return replace(msg, extra={**msg.extra, USER_LANGUAGE: known}) if known else msg

    async def _submit(self, result: InboundMessage | Ignored) -> Submission | None:
        if isinstance(result, Ignored):
            self._ignore(result)
            return None
        assert self._sink is not None
        result = self._language(result)
        async with self._order.turn(f"{result.chat_id}:{result.thread_id}"):
            try:
                return await self._sink.submit(result)
            except StateUnavailable:  # the gateway event is not re-sent: say so, keep running
                self.ctx.metrics.count("discord_refused_unwritable_state", channel=self.name)
                log.warning(
                    "message not journaled (state not writable); it is lost",
                    extra={"chat": result.chat_id},
                )
                return None

    def _ignore(self, ignored: Ignored) -> None:
        self.note_ignored(ignored.reason, ignored.chat_id, self._sink)


def _ms(seconds: float) -> int | None:
    return round(seconds * 1000) if seconds == seconds and seconds != float("inf") else None


__all__ = ["DiscordChannel"]
