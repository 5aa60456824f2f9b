"""`chatgate doctor` for WhatsApp against the fake Graph API."""

from __future__ import annotations

from typing import Any

from chatgate.channels.whatsapp.config import WhatsAppChannelConfig
from chatgate.channels.whatsapp.doctor import check
from chatgate.config.findings import Level
from tests.fakes.whatsapp import (
    ACCESS_TOKEN,
    APP_SECRET,
    PHONE_NUMBER_ID,
    VERIFY_TOKEN,
    WABA_ID,
    FakeWhatsApp,
    Template,
)


def section(wa: FakeWhatsApp, **extra: Any) -> WhatsAppChannelConfig:
    return WhatsAppChannelConfig.model_validate(
        {
            "access_token": ACCESS_TOKEN,
            "app_secret": APP_SECRET,
            "verify_token": VERIFY_TOKEN,
            "phone_number_id": PHONE_NUMBER_ID,
            "business_account_id": WABA_ID,
            "api_base": wa.api_base,
            **extra,
        }
    )


def levels(findings: list[Any]) -> dict[str, Level]:
    return {f.check: f.level for f in findings}


async def test_a_working_number_passes_every_check(fake_wa: FakeWhatsApp) -> None:
    fake_wa.templates.append(Template("update", "en"))
    template = {"outside_window": {"name": "update", "language": "en"}}
    findings = await check("whatsapp", section(fake_wa, templates=template), False)
    assert levels(findings) == {
        "whatsapp.token": Level.OK,
        "whatsapp.webhook": Level.OK,
        "whatsapp.template": Level.OK,
    }
    assert "quality GREEN" in findings[0].detail


async def test_each_problem_names_its_fix(fake_wa: FakeWhatsApp) -> None:
    fake_wa.subscribed = False
    fake_wa.templates.append(Template("update", "en", status="REJECTED"))
    template = {"outside_window": {"name": "update", "language": "en"}}
    findings = await check("whatsapp", section(fake_wa, templates=template), False)
    assert levels(findings) == {
        "whatsapp.token": Level.OK,
        "whatsapp.webhook": Level.FAIL,
        "whatsapp.template": Level.FAIL,
    }
    assert "subscribed_apps" in str(findings[1].fix) and "REJECTED" in findings[2].detail
    fake_wa.expire_token()
    [expired] = await check("whatsapp", section(fake_wa), False)
    assert expired.level is Level.FAIL and "generate a new system-user token" in str(expired.fix)
    assert ACCESS_TOKEN not in expired.detail + str(expired.fix)


async def test_unknown_number_offline_and_unconfigured(fake_wa: FakeWhatsApp) -> None:
    [unknown] = await check("whatsapp", section(fake_wa, phone_number_id="42"), False)
    assert unknown.level is Level.FAIL and "Phone number ID" in str(unknown.fix)
    [offline] = await check("whatsapp", section(fake_wa), True)
    assert offline.level is Level.SKIP
    [missing] = await check("whatsapp", WhatsAppChannelConfig(), False)
    assert missing.level is Level.WARN and "access_token" in str(missing.fix)
    no_waba = await check("whatsapp", section(fake_wa, business_account_id=None), False)
    assert levels(no_waba)["whatsapp.webhook"] is Level.WARN
