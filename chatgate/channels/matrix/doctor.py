"""`chatgate doctor` for Matrix: whoami (user and device as configured), server versions,
media upload limit, and with `e2ee: true` whether python-olm is here, the device's keys are
uploaded and the account has cross-signing keys."""

from __future__ import annotations

import asyncio
from typing import Any

from chatgate.channels.matrix.config import MatrixChannelConfig
from chatgate.config.base import secret_value
from chatgate.config.findings import Finding, Level

PROBE_TIMEOUT_S = 20.0
NETWORK_HINT = "check channels.matrix.homeserver (the client-server API base URL) and the network"
CROSS_SIGNING_HINT = (
    "optional: the bot has no cross-signing keys, so Element shows its device as unverified; "
    "messages still flow (the bot shares keys with unverified devices)"
)


async def check(name: str, config: MatrixChannelConfig, offline: bool) -> list[Finding]:
    findings = _e2ee_local(name, config)
    key = f"channels.{name}.access_token"
    if secret_value(config.access_token) is None and secret_value(config.password) is None:
        from chatgate.channels.matrix.client import NO_CREDENTIALS_HINT

        msg = "not configured: no access token or password"
        return [Finding(f"{name}.token", Level.WARN, msg, NO_CREDENTIALS_HINT, key), *findings]
    if offline:
        return [
            Finding(f"{name}.token", Level.SKIP, "credentials set; not contacted (--offline)"),
            *findings,
        ]
    try:
        return [*await asyncio.wait_for(_probe(name, config), PROBE_TIMEOUT_S), *findings]
    except TimeoutError:
        text = f"no answer from {config.homeserver} within {PROBE_TIMEOUT_S:.0f} s"
        return [Finding(f"{name}.token", Level.FAIL, text, NETWORK_HINT, key), *findings]


def _e2ee_local(name: str, config: MatrixChannelConfig) -> list[Finding]:
    if not config.e2ee:
        return []
    from chatgate.channels.matrix.crypto import OLM_HINT, olm_missing

    why = olm_missing()
    check_id, key = f"{name}.e2ee", f"channels.{name}.e2ee"
    if why is None:
        return [Finding(check_id, Level.OK, "python-olm available: encrypted rooms work", key=key)]
    text = f"{why}: the channel runs unencrypted (encrypted rooms are not answered)"
    return [Finding(check_id, Level.WARN, text, OLM_HINT, key)]


async def _probe(name: str, config: MatrixChannelConfig) -> list[Finding]:
    from chatgate.channels.base import ChannelError
    from chatgate.channels.matrix import errors, media
    from chatgate.channels.matrix.client import connect

    key = f"channels.{name}.access_token"
    try:
        session = await connect(config)
    except ChannelError as exc:
        return [Finding(f"{name}.token", Level.FAIL, str(exc), exc.hint, key)]
    except Exception as exc:
        hint = errors.TOKEN_HINT if errors.kind_of(exc).value == "auth_fatal" else NETWORK_HINT
        return [Finding(f"{name}.token", Level.FAIL, errors.describe(exc), hint, key)]
    try:
        client = session.client
        who = f"{client.mxid} on device {client.device_id}"
        findings = [Finding(f"{name}.token", Level.OK, who, key=key)]
        versions = await client.versions()
        latest = str(versions.versions[-1]) if versions.versions else "?"
        findings.append(Finding(f"{name}.server", Level.OK, f"client-server API up to {latest}"))
        limit = await _safe(media.upload_limit(session))
        text = f"uploads up to {limit // 1_048_576} MiB" if limit else "no upload limit announced"
        findings.append(Finding(f"{name}.media", Level.OK, text))
        if config.e2ee:
            findings.extend(await _keys(name, client))
        return findings
    finally:
        await session.close()


async def _safe(coro: Any) -> Any:
    try:
        return await coro
    except Exception:
        return None


async def _keys(name: str, client: Any) -> list[Finding]:
    """Whether this device's keys are on the server, and whether cross-signing is set up."""
    from mautrix.types import UserID

    user = UserID(str(client.mxid))
    result = await _safe(client.query_keys([user]))
    if result is None:
        return [Finding(f"{name}.keys", Level.WARN, "could not query the device keys")]
    devices = {str(d): keys for d, keys in result.device_keys.get(user, {}).items()}
    mine = devices.get(str(client.device_id))
    uploaded = mine is not None
    state = "not uploaded yet (the channel uploads them at start)"
    if mine is not None:
        state = f"uploaded (ed25519 {_fingerprint(mine)})"
    level = Level.OK if uploaded else Level.WARN
    findings = [Finding(f"{name}.keys", level, f"device keys {state}")]
    signed = user in (result.master_keys or {})
    if signed:
        findings.append(Finding(f"{name}.cross_signing", Level.OK, "cross-signing keys published"))
    else:
        text = "no cross-signing keys"
        findings.append(Finding(f"{name}.cross_signing", Level.WARN, text, CROSS_SIGNING_HINT))
    return findings


def _fingerprint(keys: Any) -> str:
    """The device's ed25519 key as Element shows it (groups of four)."""
    signing = str(getattr(keys, "ed25519", "") or "")
    return " ".join(signing[i : i + 4] for i in range(0, len(signing), 4)) or "?"
