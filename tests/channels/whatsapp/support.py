"""Gateway + fake WhatsApp Cloud API + fake model wiring for the WhatsApp end-to-end tests."""

from __future__ import annotations

from pathlib import Path

from chatgate.gateway.app import Gateway
from tests.fakes.llm import FakeLLM
from tests.fakes.whatsapp import (
    ACCESS_TOKEN,
    APP_SECRET,
    PHONE_NUMBER_ID,
    VERIFY_TOKEN,
    WABA_ID,
    FakeWhatsApp,
)
from tests.harness import url, write_config

WEBHOOK = "/whatsapp/webhook"
USER = "15551230001"


def whatsapp_config(
    tmp_path: Path,
    wa: FakeWhatsApp,
    llm: FakeLLM,
    *,
    channel: str = "    dm_policy: open\n",
    agent: str = "default",
    gateway: str = "",
    extra_channels: str = "",
    agents: str = "",
) -> Path:
    return write_config(
        tmp_path,
        f"""{gateway}
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {llm.base_url}
    api_key: sk-whatsapp-test
    timeout_s: 10
  menu: {{backend: python, function: "tests.channels.whatsapp.agents:menu"}}
  files: {{backend: python, function: "tests.channels.whatsapp.agents:files"}}
{agents}channels:
  whatsapp:
    access_token: "{ACCESS_TOKEN}"
    app_secret: "{APP_SECRET}"
    verify_token: "{VERIFY_TOKEN}"
    phone_number_id: "{PHONE_NUMBER_ID}"
    business_account_id: "{WABA_ID}"
    api_base: {wa.api_base}
    request_timeout_s: 5
    agent: {agent}
{channel}{extra_channels}""",
    )


def webhook_url(gw: Gateway) -> str:
    return url(gw, WEBHOOK)
