"""mautrix's crypto store kept in Redis, so the replica that takes the Matrix lease over decrypts
with the same olm account, olm sessions and room keys as the one that held it.

mautrix's MemoryCryptoStore is the working set; every change is written through to one Redis
hash per kind (pickled with the store's pickle key) before the call returns, and `load` fills
the working set from them when a replica takes the channel. Only the lease holder writes.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from mautrix.crypto import InboundGroupSession, OlmAccount, OutboundGroupSession, Session
from mautrix.crypto.sessions import RatchetSafety
from mautrix.crypto.store import MemoryCryptoStore
from mautrix.types import (
    CrossSigner,
    CrossSigningUsage,
    DeviceID,
    DeviceIdentity,
    EventID,
    IdentityKey,
    RoomID,
    SessionID,
    SigningKey,
    TOFUSigningKey,
    TrustState,
    UserID,
)
from redis.asyncio import Redis

from chatgate.channels.matrix.replay import ReplayWindow
from chatgate.state.redis.client import unavailable

KINDS = ("account", "olm", "inbound", "outbound", "index", "devices", "xsign", "signatures")
WHAT = "matrix crypto store"
Blob = dict[str, Any]


def _ts(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def _dt(value: float | None) -> datetime | None:
    return datetime.fromtimestamp(value) if value is not None else None


def _field(*parts: str) -> str:
    return "|".join(parts)


def _device(blob: Blob) -> DeviceIdentity:
    return DeviceIdentity(
        user_id=UserID(blob["user_id"]),
        device_id=DeviceID(blob["device_id"]),
        identity_key=IdentityKey(blob["identity_key"]),
        signing_key=SigningKey(blob["signing_key"]),
        trust=TrustState(blob["trust"]),
        deleted=bool(blob["deleted"]),
        name=str(blob["name"]),
    )


def _device_blob(device: DeviceIdentity) -> Blob:
    return {
        "user_id": device.user_id,
        "device_id": device.device_id,
        "identity_key": device.identity_key,
        "signing_key": device.signing_key,
        "trust": int(device.trust),
        "deleted": device.deleted,
        "name": device.name,
    }


class RedisCryptoStore(MemoryCryptoStore):
    """A MemoryCryptoStore whose every change is also in Redis under `prefix`."""

    def __init__(
        self, client: Redis, prefix: str, account_id: str, window: ReplayWindow | None = None
    ) -> None:
        super().__init__(account_id, "")
        self.client, self.prefix = client, prefix
        self.window = window or ReplayWindow()

    def _key(self, kind: str) -> str:
        return f"{self.prefix}:{kind}"

    @unavailable(WHAT)
    async def _put(self, kind: str, field: str, blob: Blob) -> None:
        await self.client.hset(self._key(kind), field, json.dumps(blob))

    @unavailable(WHAT)
    async def _drop(self, kind: str, *fields: str) -> None:
        if fields:
            await self.client.hdel(self._key(kind), *fields)

    @unavailable(WHAT)
    async def _all(self, kind: str) -> dict[str, Blob]:
        raw = await self.client.hgetall(self._key(kind))
        return {_text(k): json.loads(v) for k, v in raw.items()}

    # -- opening ----------------------------------------------------------------------------

    @unavailable(WHAT)
    async def open(self) -> None:
        """Takes the pickle key (made by the first holder) and loads everything stored."""
        key = self._key("pickle_key")
        await self.client.set(key, secrets.token_urlsafe(32), nx=True)
        self.pickle_key = _text(await self.client.get(key))
        loaders: dict[str, Callable[[dict[str, Blob]], None]] = {
            "account": self._load_account,
            "olm": self._load_olm,
            "inbound": self._load_inbound,
            "outbound": self._load_outbound,
            "index": self._load_index,
            "devices": self._load_devices,
            "xsign": self._load_xsign,
            "signatures": self._load_signatures,
        }
        for kind, load in loaders.items():
            load(await self._all(kind))

    def _load_account(self, rows: dict[str, Blob]) -> None:
        row = rows.get("account")
        if row is None:
            return
        self._device_id = DeviceID(row["device_id"]) if row.get("device_id") else None
        if row.get("pickle"):
            self._account = OlmAccount.from_pickle(
                row["pickle"].encode(), passphrase=self.pickle_key, shared=bool(row["shared"])
            )

    def _load_olm(self, rows: dict[str, Blob]) -> None:
        ordered = sorted(rows.values(), key=lambda r: r["last_decrypted"] or 0)
        for row in ordered:
            session = Session.from_pickle(
                row["pickle"].encode(),
                passphrase=self.pickle_key,
                creation_time=_dt(row["created"]) or datetime.now(),
                last_encrypted=_dt(row["last_encrypted"]),
                last_decrypted=_dt(row["last_decrypted"]),
            )
            self._olm_sessions.setdefault(IdentityKey(row["sender_key"]), []).append(session)

    def _load_inbound(self, rows: dict[str, Blob]) -> None:
        for row in rows.values():
            session = InboundGroupSession.from_pickle(
                row["pickle"].encode(),
                passphrase=self.pickle_key,
                signing_key=SigningKey(row["signing_key"]),
                sender_key=IdentityKey(row["sender_key"]),
                room_id=RoomID(row["room_id"]),
                forwarding_chain=row["forwarding_chain"],
                ratchet_safety=RatchetSafety.deserialize(row["ratchet_safety"]),
                received_at=_dt(row["received_at"]),
                max_age=timedelta(seconds=row["max_age"]) if row["max_age"] else None,
                max_messages=row["max_messages"],
                is_scheduled=bool(row["is_scheduled"]),
            )
            self._inbound_sessions[(session.room_id, SessionID(session.id))] = session

    def _load_outbound(self, rows: dict[str, Blob]) -> None:
        for room, row in rows.items():
            self._outbound_sessions[RoomID(room)] = OutboundGroupSession.from_pickle(
                row["pickle"].encode(),
                passphrase=self.pickle_key,
                max_age=timedelta(seconds=row["max_age"]),
                max_messages=row["max_messages"],
                creation_time=_dt(row["created"]) or datetime.now(),
                use_time=_dt(row["used"]) or datetime.now(),
                message_count=row["message_count"],
                room_id=RoomID(room),
                shared=bool(row["shared"]),
            )

    def _load_index(self, rows: dict[str, Blob]) -> None:
        for field, row in rows.items():
            sender, session, index = field.split("|")
            key = (IdentityKey(sender), SessionID(session), int(index))
            self._message_indices[key] = (EventID(row["event_id"]), int(row["timestamp"]))
        times = [t for _, t in self._message_indices.values()]
        if times:
            self.window.loaded(len(times), min(times), max(times))

    def _load_devices(self, rows: dict[str, Blob]) -> None:
        for user, devices in rows.items():
            self._devices[UserID(user)] = {DeviceID(d): _device(b) for d, b in devices.items()}

    def _load_xsign(self, rows: dict[str, Blob]) -> None:
        for user, keys in rows.items():
            self._cross_signing_keys[UserID(user)] = {
                CrossSigningUsage(usage): TOFUSigningKey(
                    key=SigningKey(k["key"]), first=SigningKey(k["first"])
                )
                for usage, k in keys.items()
            }

    def _load_signatures(self, rows: dict[str, Blob]) -> None:
        for signer, targets in rows.items():
            self._signatures[_signer(signer)] = {_signer(t): s for t, s in targets.items()}

    # -- account and olm sessions -----------------------------------------------------------

    async def put_device_id(self, device_id: DeviceID) -> None:
        await super().put_device_id(device_id)
        await self._put_account()

    async def put_account(self, account: OlmAccount) -> None:
        await super().put_account(account)
        await self._put_account()

    async def _put_account(self) -> None:
        account = self._account
        blob: Blob = {"device_id": self._device_id or "", "shared": False, "pickle": ""}
        if account is not None:
            blob.update(shared=account.shared, pickle=account.pickle(self.pickle_key).decode())
        await self._put("account", "account", blob)

    async def delete(self) -> None:
        await super().delete()
        await self._forget("account", "olm", "outbound")

    @unavailable(WHAT)
    async def _forget(self, *kinds: str) -> None:
        await self.client.delete(*(self._key(k) for k in kinds))

    async def add_session(self, key: IdentityKey, session: Session) -> None:
        await super().add_session(key, session)
        await self.update_session(key, session)

    async def update_session(self, key: IdentityKey, session: Session) -> None:
        blob = {
            "sender_key": key,
            "pickle": session.pickle(self.pickle_key).decode(),
            "created": _ts(session.creation_time),
            "last_encrypted": _ts(session.last_encrypted),
            "last_decrypted": _ts(session.last_decrypted),
        }
        await self._put("olm", _field(key, session.id), blob)

    # -- room keys --------------------------------------------------------------------------

    async def put_group_session(
        self,
        room_id: RoomID,
        sender_key: IdentityKey,
        session_id: SessionID,
        session: InboundGroupSession,
    ) -> None:
        await super().put_group_session(room_id, sender_key, session_id, session)
        blob = {
            "pickle": session.pickle(self.pickle_key).decode(),
            "signing_key": session.signing_key,
            "sender_key": sender_key,
            "room_id": room_id,
            "forwarding_chain": list(session.forwarding_chain or []),
            "ratchet_safety": session.ratchet_safety.serialize(),
            "received_at": _ts(session.received_at),
            "max_age": session.max_age.total_seconds() if session.max_age else None,
            "max_messages": session.max_messages,
            "is_scheduled": session.is_scheduled,
        }
        await self._put("inbound", _field(room_id, session_id), blob)

    async def redact_group_session(
        self, room_id: RoomID, session_id: SessionID, reason: str
    ) -> None:
        await super().redact_group_session(room_id, session_id, reason)
        await self._drop("inbound", _field(room_id, session_id))

    async def redact_group_sessions(
        self, room_id: RoomID | None, sender_key: IdentityKey | None, reason: str
    ) -> list[SessionID]:
        before = set(self._inbound_sessions)
        deleted = await super().redact_group_sessions(
            room_id or RoomID(""), sender_key or IdentityKey(""), reason
        )
        gone = before - set(self._inbound_sessions)
        await self._drop("inbound", *(_field(room, session) for room, session in gone))
        return deleted

    async def redact_expired_group_sessions(self) -> list[SessionID]:
        return []  # room keys are kept: a restart may still need to read old messages

    async def redact_outdated_group_sessions(self) -> list[SessionID]:
        return []

    async def add_outbound_group_session(self, session: OutboundGroupSession) -> None:
        await super().add_outbound_group_session(session)
        await self.update_outbound_group_session(session)

    async def update_outbound_group_session(self, session: OutboundGroupSession) -> None:
        blob = {
            "pickle": session.pickle(self.pickle_key).decode(),
            "shared": session.shared,
            "max_age": session.max_age.total_seconds(),
            "max_messages": session.max_messages,
            "message_count": session.message_count,
            "created": _ts(session.creation_time),
            "used": _ts(session.use_time),
        }
        await self._put("outbound", session.room_id, blob)

    async def remove_outbound_group_session(self, room_id: RoomID) -> None:
        await super().remove_outbound_group_session(room_id)
        await self._drop("outbound", room_id)

    async def remove_outbound_group_sessions(self, rooms: list[RoomID]) -> None:
        await super().remove_outbound_group_sessions(rooms)
        await self._drop("outbound", *rooms)

    async def validate_message_index(
        self,
        sender_key: IdentityKey,
        session_id: SessionID,
        event_id: EventID,
        index: int,
        timestamp: int,
    ) -> bool:
        known = (sender_key, session_id, index) in self._message_indices
        if not known and self.window.refuses(timestamp):
            return False  # older than every index still kept: perhaps a pruned one replayed
        valid = await super().validate_message_index(
            sender_key, session_id, event_id, index, timestamp
        )
        if not known:
            blob = {"event_id": event_id, "timestamp": timestamp}
            await self._put("index", _field(sender_key, session_id, str(index)), blob)
            if self.window.added(timestamp):
                await self._prune_indices()
        return valid

    async def _prune_indices(self) -> None:
        indices = self._message_indices
        drop = self.window.plan({k: t for k, (_, t) in indices.items()})
        for key in drop:
            del indices[key]
        await self._drop("index", *(_field(s, session, str(i)) for s, session, i in drop))

    # -- devices and cross-signing ----------------------------------------------------------

    async def put_devices(self, user_id: UserID, devices: dict[DeviceID, DeviceIdentity]) -> None:
        await super().put_devices(user_id, devices)
        blob = {str(d): _device_blob(identity) for d, identity in devices.items()}
        await self._put("devices", user_id, blob)

    async def put_cross_signing_key(
        self, user_id: UserID, usage: CrossSigningUsage, key: SigningKey
    ) -> None:
        await super().put_cross_signing_key(user_id, usage, key)
        keys = self._cross_signing_keys.get(user_id, {})
        blob = {u.value: {"key": k.key, "first": k.first} for u, k in keys.items()}
        await self._put("xsign", user_id, blob)

    async def put_signature(self, target: CrossSigner, signer: CrossSigner, signature: str) -> None:
        await super().put_signature(target, signer, signature)
        await self._put_signatures(signer)

    async def drop_signatures_by_key(self, signer: CrossSigner) -> int:
        dropped = self._signatures.pop(signer, None)
        await self._drop("signatures", _field(*signer))
        return len(dropped or {})

    async def _put_signatures(self, signer: CrossSigner) -> None:
        targets = self._signatures.get(signer, {})
        blob = {_field(*t): s for t, s in targets.items()}
        await self._put("signatures", _field(*signer), blob)


def _signer(value: str) -> CrossSigner:
    user, key = value.split("|", 1)
    return CrossSigner(UserID(user), SigningKey(key))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
