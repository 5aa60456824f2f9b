"""People on the test Synapse: a real mautrix client each, with its own sync loop, that can open
DMs and rooms, send, and wait for what the bot answers (decrypting when e2ee is on)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mautrix.client import Client
from mautrix.types import EventType, RoomCreatePreset, RoomID, UserID

from chatgate.channels.matrix.client import RoomStates
from tests.fakes.llm import FakeLLM
from tests.harness import fake_model_config
from tests.support.synapse import MatrixUser, Synapse

Event = dict[str, Any]


class Person:
    """A Matrix user the tests act as."""

    def __init__(self, synapse: Synapse, user: MatrixUser) -> None:
        self.synapse, self.user = synapse, user
        self.client = Client(
            mxid=UserID(user.user_id),
            device_id=user.device_id,  # type: ignore[arg-type]
            base_url=synapse.base_url,
            token=user.access_token,
            state_store=RoomStates(),
        )
        self.events: list[Event] = []
        self.invites: list[str] = []
        self.since: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self.crypto: Any = None

    @property
    def user_id(self) -> str:
        return self.user.user_id

    async def start(self, *, e2ee: bool = False) -> Person:
        if e2ee:
            from mautrix.client.encryption_manager import DecryptionDispatcher
            from mautrix.crypto import OlmMachine
            from mautrix.crypto.store import MemoryCryptoStore
            from mautrix.types import TrustState

            store = MemoryCryptoStore(self.user_id, "pickle")
            machine = OlmMachine(self.client, store, self.client.state_store)  # type: ignore[arg-type]
            machine.share_keys_min_trust = TrustState.UNVERIFIED
            machine.send_keys_min_trust = TrustState.UNVERIFIED
            await machine.load()
            self.client.crypto = machine
            self.client.remove_dispatcher(DecryptionDispatcher)
            await machine.share_keys()
            self.crypto = machine
        self._task = asyncio.create_task(self._sync())
        await self.wait(lambda: self.since is not None)
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await self.client.api.session.close()

    async def _sync(self) -> None:
        while True:
            try:
                data = await self.client.sync(since=self.since, timeout=2000)
            except asyncio.CancelledError:
                raise
            except Exception:
                await asyncio.sleep(0.2)
                continue
            await asyncio.gather(*self.client.handle_sync(data))
            rooms = data.get("rooms", {})
            self.invites.extend(rooms.get("invite", {}))
            for room_id, room in rooms.get("join", {}).items():
                for event in room.get("timeline", {}).get("events", []):
                    event["room_id"] = room_id
                    self.events.append(await self._plain(event))
            self.since = data["next_batch"]
            self._changed.set()

    async def _plain(self, event: Event) -> Event:
        if event.get("type") != "m.room.encrypted" or self.crypto is None:
            return event
        from mautrix.types import EncryptedEvent

        try:
            plain = await self.crypto.decrypt_megolm_event(EncryptedEvent.deserialize(event))
        except Exception as exc:
            return {**event, "undecrypted": type(exc).__name__}
        data: Event = plain.serialize()
        data.update(room_id=event["room_id"], event_id=event["event_id"], was_encrypted=True)
        data.setdefault("sender", event["sender"])
        return data

    async def wait(self, done: Callable[[], bool], timeout: float = 20.0) -> None:
        async with asyncio.timeout(timeout):
            while not done():
                self._changed.clear()
                await self._changed.wait()

    def messages_from(self, sender: str, room: str | None = None) -> list[Event]:
        return [
            e
            for e in self.events
            if e.get("sender") == sender
            and e.get("type") == "m.room.message"
            and (room is None or e.get("room_id") == room)
        ]

    async def answers(
        self, bot: str, room: str, count: int = 1, timeout: float = 20.0
    ) -> list[Event]:
        await self.wait(lambda: len(self.messages_from(bot, room)) >= count, timeout)
        return self.messages_from(bot, room)

    async def dm(self, other: str, *, encrypted: bool = False) -> str:
        state = []
        if encrypted:
            state.append(
                {
                    "type": "m.room.encryption",
                    "state_key": "",
                    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
                }
            )
        room = await self.client.create_room(
            preset=RoomCreatePreset.TRUSTED_PRIVATE,
            invitees=[UserID(other)],
            is_direct=True,
            initial_state=state,
        )
        return str(room)

    async def room(self, *invitees: str, name: str = "team") -> str:
        room = await self.client.create_room(
            preset=RoomCreatePreset.PRIVATE, invitees=[UserID(u) for u in invitees], name=name
        )
        return str(room)

    async def join(self, room: str) -> None:
        await self.client.join_room_by_id(RoomID(room))

    async def wait_joined(self, room: str, user: str, timeout: float = 20.0) -> None:
        def joined() -> bool:
            return any(
                e.get("type") == "m.room.member"
                and e.get("state_key") == user
                and e.get("room_id") == room
                and e.get("content", {}).get("membership") == "join"
                for e in self.events
            )

        await self.wait(joined, timeout)

    async def send(self, room: str, text: str, **extra: Any) -> str:
        content: dict[str, Any] = {"msgtype": "m.text", "body": text, **extra}
        return str(
            await self.client.send_message_event(RoomID(room), EventType.ROOM_MESSAGE, content)
        )

    async def send_raw(self, room: str, kind: str, content: dict[str, Any]) -> str:
        event_type = EventType.find(kind, EventType.Class.MESSAGE)
        return str(await self.client.send_message_event(RoomID(room), event_type, content))


def matrix_config(
    tmp_path: Path,
    synapse: Synapse,
    bot: MatrixUser,
    llm: FakeLLM,
    *,
    channel: str = "",
    gateway: str = "",
) -> Path:
    return fake_model_config(
        tmp_path,
        llm,
        f"""  matrix:
    homeserver: {synapse.base_url}
    user_id: "{bot.user_id}"
    access_token: "{bot.access_token}"
    device_id: {bot.device_id}
    sync_timeout_s: 2
    request_timeout_s: 5
{channel}
""",
        head=gateway,
        api_key="sk-matrix-test",
    )
