"""End-to-end encryption through mautrix's OlmMachine, its keys in a SQLite store in state_dir,
or in Redis in replica mode (so the replica that takes the channel over decrypts).

A bot cannot verify anyone, so room keys are shared with (and accepted from) unverified
devices. When `python-olm` is missing the channel runs unencrypted and `doctor` says why.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from chatgate.model.errors import StateUnavailable

if TYPE_CHECKING:
    from mautrix.client import Client
    from mautrix.crypto.store import CryptoStore
    from redis.asyncio import Redis

log = logging.getLogger("chatgate.matrix")
OLM_HINT = (
    "install python-olm (pip install python-olm; it needs a C compiler and cmake where no "
    "wheel exists) or set channels.matrix.e2ee: false"
)


def olm_missing() -> str | None:
    """Why encryption cannot run here, or None when it can."""
    try:
        import olm  # noqa: F401
        from mautrix.crypto import OlmMachine  # noqa: F401
    except ImportError as exc:
        return f"{exc.name or 'python-olm'} is not installed"
    return None


def _pickle_key(folder: Path) -> str:
    """The key the olm account is pickled with, made once and kept beside the store (0600)."""
    path = folder / "pickle.key"
    if path.exists():
        return path.read_text().strip()
    value = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return value


@dataclass
class Crypto:
    machine: Any
    stop: Callable[[], Awaitable[None]]

    async def close(self) -> None:
        await self.stop()

    def facts(self) -> dict[str, Any]:
        account = self.machine.account
        return {
            "device_keys_uploaded": bool(account is not None and account.shared),
            "identity_key": str(account.identity_key) if account is not None else "",
        }


@dataclass(frozen=True)
class Place:
    """Where the keys live: a folder of the state dir, or Redis under `prefix` (replicas)."""

    folder: Path
    redis: Redis | None = None
    prefix: str = ""


async def _open(place: Place, user_id: str) -> tuple[CryptoStore, Callable[[], Awaitable[None]]]:
    """The opened store and how to close it."""
    if place.redis is not None:
        from chatgate.channels.matrix.crypto_store import RedisCryptoStore

        shared = RedisCryptoStore(place.redis, place.prefix, user_id)
        await shared.open()
        return shared, shared.close
    from mautrix.crypto import PgCryptoStore
    from mautrix.util.async_db import Database

    from chatgate.channels.matrix.crypto_sqlite import SqliteCryptoStore

    await asyncio.to_thread(place.folder.mkdir, parents=True, exist_ok=True)
    db = Database.create(
        f"sqlite:{place.folder / 'crypto.db'}",
        upgrade_table=PgCryptoStore.upgrade_table,
        log=logging.getLogger("chatgate.matrix.crypto.db"),
    )
    key = await asyncio.to_thread(_pickle_key, place.folder)
    await db.start()
    store = SqliteCryptoStore(user_id, key, db)
    await store.open()
    return store, db.stop


async def enable(client: Client, place: Place) -> Crypto:
    """An OlmMachine on `client` whose keys live at `place`; device keys uploaded."""
    from mautrix.client.encryption_manager import DecryptionDispatcher
    from mautrix.crypto import OlmMachine
    from mautrix.types import TrustState

    store, stop = await _open(place, str(client.mxid))
    try:
        stored = await store.get_device_id()
        if stored and stored != client.device_id:
            log.warning("the crypto store held keys of device %s; starting afresh", stored)
            await store.delete()
        await store.put_device_id(client.device_id)
        machine = OlmMachine(client, store, client.state_store)  # type: ignore[arg-type]
        machine.share_keys_min_trust = TrustState.UNVERIFIED
        machine.send_keys_min_trust = TrustState.UNVERIFIED
        await machine.load()
        client.crypto = machine
        client.remove_dispatcher(DecryptionDispatcher)  # the channel decrypts what it reads
        await machine.share_keys()
    except BaseException:
        await stop()
        raise
    return Crypto(machine, stop)


async def decrypt(crypto: Crypto, raw: dict[str, Any]) -> dict[str, Any] | None:
    """The decrypted event as raw JSON (room, sender, ids kept), or None without the key."""
    from mautrix.types import JSON, EncryptedEvent

    try:
        event = EncryptedEvent.deserialize(cast(JSON, raw))
        plain = await crypto.machine.decrypt_megolm_event(event)
    except StateUnavailable:
        raise  # the store is away: the batch is fetched again, not dropped as undecryptable
    except Exception as exc:
        log.warning("could not decrypt %s: %s", raw.get("event_id"), type(exc).__name__)
        return None
    data: dict[str, Any] = plain.serialize()
    data.setdefault("event_id", raw.get("event_id"))
    data.setdefault("sender", raw.get("sender"))
    data.setdefault("origin_server_ts", raw.get("origin_server_ts"))
    relates = raw.get("content", {}).get("m.relates_to")
    if relates and "m.relates_to" not in data.get("content", {}):
        data.setdefault("content", {})["m.relates_to"] = relates
    return data
