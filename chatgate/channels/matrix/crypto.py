"""End-to-end encryption through mautrix's OlmMachine, its keys in a SQLite store in state_dir.

A bot cannot verify anyone, so room keys are shared with (and accepted from) unverified
devices. When `python-olm` is missing the channel runs unencrypted and `doctor` says why.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from mautrix.client import Client
    from mautrix.util.async_db import Database

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
    db: Database
    machine: Any

    async def close(self) -> None:
        await self.db.stop()

    def facts(self) -> dict[str, Any]:
        account = self.machine.account
        return {
            "device_keys_uploaded": bool(account is not None and account.shared),
            "identity_key": str(account.identity_key) if account is not None else "",
        }


def _open(folder: Path, user_id: str, device_id: str) -> tuple[Database, Any]:
    from mautrix.crypto import PgCryptoStore
    from mautrix.util.async_db import Database

    db = Database.create(
        f"sqlite:{folder / 'crypto.db'}",
        upgrade_table=PgCryptoStore.upgrade_table,
        log=logging.getLogger("chatgate.matrix.crypto.db"),
    )
    return db, PgCryptoStore(user_id, _pickle_key(folder), db)


async def enable(client: Client, folder: Path) -> Crypto:
    """An OlmMachine on `client` whose keys live in `folder`; device keys uploaded."""
    from mautrix.client.encryption_manager import DecryptionDispatcher
    from mautrix.crypto import OlmMachine
    from mautrix.types import TrustState

    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    db, store = _open(folder, str(client.mxid), str(client.device_id))
    await db.start()
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
        await db.stop()
        raise
    return Crypto(db, machine)


async def decrypt(crypto: Crypto, raw: dict[str, Any]) -> dict[str, Any] | None:
    """The decrypted event as raw JSON (room, sender, ids kept), or None without the key."""
    from mautrix.types import JSON, EncryptedEvent

    try:
        event = EncryptedEvent.deserialize(cast(JSON, raw))
        plain = await crypto.machine.decrypt_megolm_event(event)
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
