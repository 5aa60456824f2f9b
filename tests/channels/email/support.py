"""Gateway config for the email end-to-end tests."""

from __future__ import annotations

from pathlib import Path

from tests.channels.email.servers import MailWorld
from tests.fakes.llm import FakeLLM
from tests.harness import fake_agent, write_config

ALICE = "alice@example.org"


def email_config(
    tmp_path: Path,
    world: MailWorld,
    llm: FakeLLM,
    *,
    channel: str = "",
    gateway: str = "",
    agent: str = "",
    agents: str = "",
) -> Path:
    allowed = '    allowed_users: ["alice@example.org", "@friends.example.net"]\n'
    return write_config(
        tmp_path,
        gateway
        + fake_agent(llm, "sk-email-test", 10)
        + "\n"
        + agent
        + agents
        + world.config()
        + allowed
        + channel,
    )
