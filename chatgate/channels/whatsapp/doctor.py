"""`chatgate doctor` for WhatsApp: the token and phone number id answer (with the number's
quality rating), the app is subscribed to the business account's webhooks, and the
outside-window template exists and is approved."""

from __future__ import annotations

import asyncio
from typing import Any

from chatgate.channels.whatsapp import errors
from chatgate.channels.whatsapp.config import WhatsAppChannelConfig
from chatgate.config.base import secret_value
from chatgate.config.findings import Finding, Level

PROBE_TIMEOUT_S = 20.0
SUBSCRIBE_HINT = (
    "subscribe the app to the account: Meta app dashboard → WhatsApp → Configuration → Webhook "
    "(callback URL https://<your host>{path}, the verify token, then Manage → messages), or "
    "POST /{waba}/subscribed_apps with the token"
)


async def check(name: str, config: WhatsAppChannelConfig, offline: bool) -> list[Finding]:
    token = secret_value(config.access_token)
    check_id, key = f"{name}.token", f"channels.{name}.access_token"
    if token is None:
        from chatgate.channels.whatsapp.adapter import NO_TOKEN_HINT

        return [
            Finding(check_id, Level.WARN, "not configured: no access token", NO_TOKEN_HINT, key)
        ]
    if offline:
        return [Finding(check_id, Level.SKIP, "token set; not contacted (--offline)", key=key)]
    try:
        return await asyncio.wait_for(_probe(name, config, token), PROBE_TIMEOUT_S)
    except TimeoutError:
        return [
            Finding(
                check_id,
                Level.FAIL,
                f"no answer from {config.api_base} within {PROBE_TIMEOUT_S:.0f} s",
                errors.network_hint(config.api_base),
                key,
            )
        ]


async def _probe(name: str, config: WhatsAppChannelConfig, token: str) -> list[Finding]:
    from chatgate.channels.whatsapp.adapter import PHONE_FIELDS
    from chatgate.channels.whatsapp.graph import Graph

    graph = Graph.open(config, token)
    try:
        try:
            number = await graph.get(str(config.phone_number_id), fields=PHONE_FIELDS)
        except Exception as exc:
            error = errors.start_error(exc, config.phone_number_id)
            return [Finding(f"{name}.token", Level.FAIL, str(error), error.hint, _key(name))]
        findings = [
            Finding(
                f"{name}.token",
                Level.OK,
                f"{number.get('display_phone_number')} ({number.get('verified_name') or '?'}), "
                f"quality {number.get('quality_rating') or 'unknown'}",
                key=_key(name),
            )
        ]
        findings.append(await _subscription(name, config, graph))
        if config.templates.outside_window is not None:
            findings.append(await _template(name, config, graph))
        return findings
    finally:
        await graph.close()


def _key(name: str) -> str:
    return f"channels.{name}.phone_number_id"


async def _subscription(name: str, config: WhatsAppChannelConfig, graph: Any) -> Finding:
    check_id, key = f"{name}.webhook", f"channels.{name}.business_account_id"
    waba = config.business_account_id
    hint = SUBSCRIBE_HINT.format(path=config.webhook_path, waba=waba or "<WABA id>")
    if waba is None:
        return Finding(
            check_id,
            Level.WARN,
            "webhook subscription not checked: business_account_id is not set",
            "set it to the WhatsApp Business Account id (WhatsApp → API Setup)",
            key,
        )
    try:
        answer = await graph.get(f"{waba}/subscribed_apps")
    except Exception as exc:
        error = errors.start_error(exc, config.phone_number_id)
        return Finding(check_id, Level.FAIL, f"subscribed_apps: {error}", error.hint, key)
    apps = answer.get("data") if isinstance(answer.get("data"), list) else []
    if not apps:
        return Finding(
            check_id, Level.FAIL, "no app is subscribed to the account's webhooks", hint, key
        )
    names = ", ".join(
        str((a.get("whatsapp_business_api_data") or {}).get("name") or "?")
        for a in apps
        if isinstance(a, dict)
    )
    return Finding(
        check_id,
        Level.OK,
        f"subscribed: {names}; Meta posts to https://<your host>{config.webhook_path}",
        key=key,
    )


async def _template(name: str, config: WhatsAppChannelConfig, graph: Any) -> Finding:
    template = config.templates.outside_window
    assert template is not None
    check_id, key = f"{name}.template", f"channels.{name}.templates.outside_window"
    if config.business_account_id is None:
        return Finding(
            check_id, Level.SKIP, "template not checked: no business_account_id", key=key
        )
    try:
        answer = await graph.get(
            f"{config.business_account_id}/message_templates", name=template.name
        )
    except Exception as exc:
        error = errors.start_error(exc, config.phone_number_id)
        return Finding(check_id, Level.FAIL, f"message_templates: {error}", error.hint, key)
    found = [
        t
        for t in answer.get("data") or []
        if isinstance(t, dict)
        and t.get("name") == template.name
        and t.get("language") == template.language
    ]
    if not found:
        return Finding(
            check_id,
            Level.FAIL,
            f"no template {template.name} in {template.language}",
            errors.TEMPLATE_HINT,
            key,
        )
    status = str(found[0].get("status") or "?")
    level = Level.OK if status == "APPROVED" else Level.FAIL
    return Finding(
        check_id,
        level,
        f"{template.name} ({template.language}): {status}",
        errors.TEMPLATE_HINT,
        key,
    )
