"""One `/sync` response into the gateway: with E2EE, state and keys to mautrix; invites per
`auto_join`, then each joined room's timeline in order (decrypted, normalised, journaled).

Events before the bot's own join event are history (being invited is not joining); the bot's
own events and those of `ignored_users` are never input.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

from mautrix.client import Client
from mautrix.types import JSON, RoomID

from chatgate.channels.base import InboundSink
from chatgate.channels.matrix import inbound
from chatgate.channels.matrix.config import MatrixChannelConfig
from chatgate.channels.matrix.crypto import Crypto, decrypt
from chatgate.channels.matrix.inbound import REACTION, Ignored, Me, Room
from chatgate.model.messages import InboundMessage
from chatgate.model.reasons import DropReason
from chatgate.policies.edits import EditMode
from chatgate.policies.reactions import CONTEXT_ONLY, ReactionMode, reaction_input

log = logging.getLogger("chatgate.matrix")
SENT_IDS_KEPT = 4096


@dataclass
class RoomFacts:
    """What the channel learned of its rooms from the syncs so far."""

    direct: set[str] = field(default_factory=set)
    joined: set[str] = field(default_factory=set)
    last_event_ts: float = 0.0


def _events(section: Mapping[str, Any]) -> list[dict[str, Any]]:
    events = section.get("events") if isinstance(section, Mapping) else None
    return [e for e in events or [] if isinstance(e, dict)]


def allowed(config: MatrixChannelConfig, user: str) -> bool:
    if user in config.blocked_users:
        return False
    return "*" in config.allowed_users or user in config.allowed_users


def accepts_invite(config: MatrixChannelConfig, inviter: str, direct: bool) -> bool:
    """`auto_join`: allowed users' invites (anyone's DM under `dm_policy: open`), all but
    blocked users', or none."""
    if config.auto_join == "none" or inviter in config.blocked_users:
        return False
    if config.auto_join == "all" or allowed(config, inviter):
        return True
    return direct and config.dm_policy == "open"


class Intake:
    def __init__(
        self,
        channel: str,
        config: Callable[[], MatrixChannelConfig],
        client: Client,
        sink: InboundSink,
        me: Me,
        crypto: Crypto | None,
        sent: dict[str, None],
        submit: Callable[[InboundMessage], Awaitable[Any]] | None = None,
    ) -> None:
        self.channel, self.config, self.client, self.sink = channel, config, client, sink
        self.me, self.crypto, self.sent = me, crypto, sent
        self.rooms = RoomFacts()
        self.submit = submit or sink.submit
        self.counters: dict[str, int] = {"messages": 0, "invites_accepted": 0, "declined": 0}

    async def handle(self, data: dict[str, Any]) -> None:
        if self.crypto is not None:  # room state, keys and device lists for the OlmMachine
            await asyncio.gather(*self.client.handle_sync(cast(JSON, data)))
        rooms = data.get("rooms") or {}
        self._account_data(data)
        for room_id, room in (rooms.get("invite") or {}).items():
            await self._invite(room_id, room)
        for room_id in rooms.get("leave") or {}:
            self.rooms.joined.discard(room_id)
        for room_id, room in (rooms.get("join") or {}).items():
            await self._joined(room_id, room)

    def _account_data(self, data: Mapping[str, Any]) -> None:
        for event in _events(data.get("account_data") or {}):
            if event.get("type") == "m.direct":
                for rooms in (event.get("content") or {}).values():
                    self.rooms.direct.update(r for r in rooms if isinstance(r, str))

    async def _invite(self, room_id: str, room: Mapping[str, Any]) -> None:
        state = _events(room.get("invite_state") or {})
        mine = next(
            (
                e
                for e in state
                if e.get("type") == "m.room.member" and e.get("state_key") == self.me.user_id
            ),
            {},
        )
        inviter = str(mine.get("sender") or "")
        direct = bool((mine.get("content") or {}).get("is_direct"))
        config = self.config()
        if accepts_invite(config, inviter, direct):
            try:
                await self.client.join_room_by_id(RoomID(room_id))
                self.counters["invites_accepted"] += 1
                if direct:
                    await self._remember_direct(room_id, inviter)
            except Exception as exc:
                log.warning("could not join %s: %s", room_id, type(exc).__name__)
            return
        self.counters["declined"] += 1
        self.sink.ignored(self.channel, DropReason.INVITE_DECLINED, chat_id=room_id)
        if config.auto_join == "allowed":
            try:  # declined without an answer; under `none` the invite stays pending
                await self.client.leave_room(RoomID(room_id))
            except Exception as exc:
                log.warning("could not decline %s: %s", room_id, type(exc).__name__)

    async def _room(self, room_id: str, room: Mapping[str, Any]) -> Room:
        """A DM is a room its invite called direct, kept in the bot's `m.direct` account data
        so it is still known after a restart."""
        return Room(room_id, room_id in self.rooms.direct, self.config().threads)

    async def load_direct(self) -> None:
        """The DMs the bot recorded before (`m.direct` of its own account)."""
        try:
            content = await self.client.get_account_data("m.direct")
        except Exception:
            return  # none recorded yet
        for rooms in (content or {}).values():
            if isinstance(rooms, list):
                self.rooms.direct.update(r for r in rooms if isinstance(r, str))

    async def _remember_direct(self, room_id: str, inviter: str) -> None:
        self.rooms.direct.add(room_id)
        try:
            content = dict(await self.client.get_account_data("m.direct") or {})
        except Exception:
            content = {}
        rooms = [r for r in content.get(inviter, []) if isinstance(r, str)]
        content[inviter] = [*rooms, room_id] if room_id not in rooms else rooms
        try:
            await self.client.set_account_data("m.direct", content)
        except Exception as exc:
            log.warning("could not record DM %s: %s", room_id, type(exc).__name__)

    async def _joined(self, room_id: str, room: Mapping[str, Any]) -> None:
        self.rooms.joined.add(room_id)
        info = await self._room(room_id, room)
        timeline = _events(room.get("timeline") or {})
        start = 0
        for index, event in enumerate(timeline):
            if (
                event.get("type") == "m.room.member"
                and event.get("state_key") == self.me.user_id
                and (event.get("content") or {}).get("membership") == "join"
                and (event.get("unsigned") or {}).get("prev_content", {}).get("membership")
                != "join"
            ):
                start = index + 1  # the bot's own join: what came before is history
        for event in timeline[:start]:
            if event.get("type") in ("m.room.message", "m.room.encrypted"):
                self.sink.ignored(self.channel, DropReason.BEFORE_JOIN, chat_id=room_id)
        for event in timeline[start:]:
            await self._event(info, event)

    async def _event(self, room: Room, event: dict[str, Any]) -> None:
        if event.get("type") == "m.room.encrypted" and event.get("sender") != self.me.user_id:
            plain = await decrypt(self.crypto, event) if self.crypto is not None else None
            if plain is None:
                self.sink.ignored(self.channel, DropReason.UNDECRYPTABLE, chat_id=room.room_id)
                return
            event = {**plain, "room_id": room.room_id}
            encrypted = True
        else:
            encrypted = False
        config = self.config()
        try:
            result = inbound.normalise(event, room, self.me, self.channel, EditMode(config.edits))
        except Exception as exc:  # one event nobody can read must not hold up the whole batch
            log.warning("unreadable event skipped", extra={"error": type(exc).__name__})
            result = Ignored(DropReason.MALFORMED_UPDATE, room.room_id)
        if isinstance(result, InboundMessage) and result.sender_id in config.ignored_users:
            result = Ignored(DropReason.BOT_LOOP, room.room_id)
        if isinstance(result, InboundMessage) and REACTION in result.extra:
            result = self._reaction(result, ReactionMode(config.reactions))
        if isinstance(result, Ignored):
            self.sink.ignored(self.channel, result.reason, chat_id=result.chat_id)
            return
        if encrypted:
            result = replace(result, extra={**result.extra, inbound.ENCRYPTED: True})
        self.rooms.last_event_ts = max(self.rooms.last_event_ts, result.received_at)
        self.counters["messages"] += 1
        await self.submit(result)

    def _reaction(self, msg: InboundMessage, mode: ReactionMode) -> InboundMessage | Ignored:
        ours = msg.reply_to is not None and msg.reply_to in self.sent
        decided = reaction_input(mode, msg.extra[REACTION], ours)
        if decided is ReactionMode.IGNORE:
            return Ignored(DropReason.REACTION_IGNORED, msg.chat_id)
        if decided is ReactionMode.CONTEXT:
            return replace(msg, extra={**msg.extra, CONTEXT_ONLY: True})
        return msg
