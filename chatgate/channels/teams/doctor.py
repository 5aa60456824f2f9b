"""`chatgate doctor` for Teams: the app id and tenant agree, a bot token can be obtained with
the app password, the signing keys are published, and the public messaging endpoint answers."""

from __future__ import annotations

import asyncio

from chatgate.channels.teams import errors
from chatgate.channels.teams.config import TeamsChannelConfig
from chatgate.config.base import secret_value
from chatgate.config.findings import Finding, Level

PROBE_TIMEOUT_S = 20.0
TENANT_HINT = (
    "a single-tenant bot lists its own tenant: add channels.teams.tenant_id to allowed_tenants, "
    "or leave allowed_tenants empty"
)
ENDPOINT_HINT = (
    "Azure calls the messaging endpoint over HTTPS: put chatgate behind a TLS proxy that forwards "
    "{path} to chatgate's port, and set the same URL in Azure Bot → Configuration"
)


async def check(name: str, config: TeamsChannelConfig, offline: bool) -> list[Finding]:
    key = f"channels.{name}.app_id"
    if not config.app_id or secret_value(config.app_password) is None:
        from chatgate.channels.teams.adapter import NO_CREDENTIALS_HINT

        return [Finding(f"{name}.token", Level.WARN, "not configured", NO_CREDENTIALS_HINT, key)]
    findings = [_tenants(name, config)]
    if offline:
        findings.append(Finding(f"{name}.token", Level.SKIP, "not contacted (--offline)", key=key))
        return findings
    try:
        findings += await asyncio.wait_for(_probe(name, config), PROBE_TIMEOUT_S)
    except TimeoutError:
        findings.append(
            Finding(
                f"{name}.token",
                Level.FAIL,
                f"no answer within {PROBE_TIMEOUT_S:.0f} s",
                errors.NETWORK_HINT,
                key,
            )
        )
    return findings


def _tenants(name: str, config: TeamsChannelConfig) -> Finding:
    check_id, key = f"{name}.tenant", f"channels.{name}.allowed_tenants"
    if (
        config.tenant_id
        and config.allowed_tenants
        and config.tenant_id not in config.allowed_tenants
    ):
        return Finding(
            check_id, Level.WARN, "tenant_id is not in allowed_tenants", TENANT_HINT, key
        )
    if config.tenant_id:
        return Finding(check_id, Level.OK, f"single-tenant ({config.tenant_id})", key=key)
    shown = ", ".join(config.allowed_tenants) or "any tenant"
    return Finding(check_id, Level.OK, f"multi-tenant; accepts {shown}", key=key)


async def _probe(name: str, config: TeamsChannelConfig) -> list[Finding]:
    import aiohttp

    from chatgate.channels.teams.auth import Unverified, Verifier
    from chatgate.channels.teams.connector import cloud_of, token_client
    from chatgate.clock import SystemClock

    key = f"channels.{name}.app_password"
    tokens = token_client(config, SystemClock())
    findings: list[Finding] = []
    try:
        await tokens.get()
        findings.append(Finding(f"{name}.token", Level.OK, "bot token obtained", key=key))
    except Exception as exc:
        result = errors.classify(exc)
        findings.append(
            Finding(f"{name}.token", Level.FAIL, result.error, errors.hint(result.kind), key)
        )
    finally:
        await tokens.close()
    cloud = cloud_of(config)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        verifier = Verifier(
            str(config.app_id),
            cloud.token_issuer,
            cloud.openid_metadata_url,
            session,
            SystemClock(),
        )
        try:
            await verifier.refresh()
            findings.append(Finding(f"{name}.keys", Level.OK, "signing keys published"))
        except Unverified as why:
            findings.append(Finding(f"{name}.keys", Level.FAIL, str(why), errors.NETWORK_HINT))
        findings.append(await _endpoint(name, config, session))
    return findings


async def _endpoint(name: str, config: TeamsChannelConfig, session: object) -> Finding:
    """An unsigned POST to the public URL must reach chatgate and be refused with 401."""
    import aiohttp

    check_id, key = f"{name}.endpoint", f"channels.{name}.public_url"
    hint = ENDPOINT_HINT.format(path=config.messaging_path)
    if not config.public_url:
        return Finding(check_id, Level.SKIP, "public_url not set; endpoint not checked", hint, key)
    assert isinstance(session, aiohttp.ClientSession)
    try:
        async with session.post(config.public_url, json={}) as response:
            status = response.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        return Finding(check_id, Level.FAIL, f"unreachable ({type(exc).__name__})", hint, key)
    if status == 401:
        return Finding(check_id, Level.OK, f"{config.public_url} reaches chatgate", key=key)
    return Finding(check_id, Level.FAIL, f"{config.public_url} answered HTTP {status}", hint, key)
