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
from tests.harness import fake_model_config, url

WEBHOOK = "/whatsapp/webhook"
USER = "15551230001"


def section(wa: FakeWhatsApp) -> str:
    """The `channels.whatsapp` section's head: the fake's credentials and address."""
    return f"""  whatsapp:
    access_token: "{ACCESS_TOKEN}"
    app_secret: "{APP_SECRET}"
    verify_token: "{VERIFY_TOKEN}"
    phone_number_id: "{PHONE_NUMBER_ID}"
    business_account_id: "{WABA_ID}"
    api_base: {wa.api_base}
    request_timeout_s: 5
"""


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
    return fake_model_config(
        tmp_path,
        llm,
        f"""{section(wa)}    agent: {agent}
{channel}{extra_channels}""",
        head=gateway,
        agents="""  menu: {backend: python, function: "tests.channels.whatsapp.agents:menu"}
  files: {backend: python, function: "tests.channels.whatsapp.agents:files"}
"""
        + agents,
        api_key="sk-whatsapp-test",
    )


def webhook_url(gw: Gateway) -> str:
    return url(gw, WEBHOOK)
