"""`channels.whatsapp` validation: what a working number needs, phone numbers, templates."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from chatgate.channels.whatsapp.config import TemplateConfig, WhatsAppChannelConfig

COMPLETE = {
    "access_token": "t",
    "app_secret": "s",
    "verify_token": "v",
    "phone_number_id": "123",
}


@pytest.mark.parametrize(
    ("drop", "words"),
    [
        ("app_secret", "app_secret required"),
        ("verify_token", "verify_token required"),
        ("phone_number_id", "phone_number_id is required"),
    ],
)
def test_a_token_needs_the_webhook_secrets_and_the_number(drop: str, words: str) -> None:
    section: dict[str, Any] = {k: v for k, v in COMPLETE.items() if k != drop}
    with pytest.raises(ValidationError, match=words):
        WhatsAppChannelConfig.model_validate(section)


def test_unconfigured_or_disabled_sections_load() -> None:
    assert WhatsAppChannelConfig.model_validate({}).access_token is None
    assert not WhatsAppChannelConfig.model_validate({"enabled": False, "access_token": "t"}).enabled


def test_users_are_phone_numbers_however_written() -> None:
    section = WhatsAppChannelConfig.model_validate(
        {
            **COMPLETE,
            "allowed_users": ["+1 (555) 010-0001", 15550100002],
            "blocked_users": ["+44 20 7946 0000"],
        }
    )
    assert section.allowed_users == ["15550100001", "15550100002"]
    assert section.blocked_users == ["442079460000"]


def test_template_placeholders_are_checked() -> None:
    assert TemplateConfig(name="x", parameters=["Hi, {text}"]).parameters == ["Hi, {text}"]
    with pytest.raises(ValidationError, match="names name"):
        TemplateConfig(name="x", parameters=["{name}"])
    with pytest.raises(ValidationError, match="literal brace"):
        TemplateConfig(name="x", parameters=["{text"])
    with pytest.raises(ValidationError):
        TemplateConfig(name="Has Spaces")


def test_unquoted_ids_are_read_as_digits() -> None:
    section = WhatsAppChannelConfig.model_validate({**COMPLETE, "phone_number_id": 106540352242922})
    assert section.phone_number_id == "106540352242922"


def test_the_shipped_sample_leaves_whatsapp_not_configured() -> None:
    section = WhatsAppChannelConfig.model_validate(
        {"access_token": "", "app_secret": "", "verify_token": "", "phone_number_id": ""}
    )
    assert section.phone_number_id is None and section.access_token is not None
