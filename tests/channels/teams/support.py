"""Gateway + fake Microsoft cloud + fake model wiring for the Teams end-to-end tests."""

from __future__ import annotations

from pathlib import Path

from chatgate.gateway.app import Gateway
from tests.fakes.llm import FakeLLM
from tests.fakes.teams import APP_ID, APP_PASSWORD, FakeTeams
from tests.harness import fake_model_config, url

PATH = "/teams/messages"
CHANNEL = "19:general-channel@thread.tacv2"


def teams_config(
    tmp_path: Path,
    ms: FakeTeams,
    llm: FakeLLM,
    *,
    channel: str = "    dm_policy: open\n",
    agent: str = "default",
    password: str = APP_PASSWORD,
    agents: str = "",
    extra: str = "",
    head: str = "",
) -> Path:
    return fake_model_config(
        tmp_path,
        llm,
        f"""  teams:
    app_id: "{APP_ID}"
    app_password: "{password}"
    request_timeout_s: 5
    agent: {agent}
{ms.endpoints_yaml()}{channel}{extra}""",
        head=head,
        agents="""  menu: {backend: python, function: "tests.channels.teams.agents:menu"}
  files: {backend: python, function: "tests.channels.teams.agents:files"}
"""
        + agents,
        api_key="sk-teams-test",
    )


def endpoint(gw: Gateway) -> str:
    return url(gw, PATH)
