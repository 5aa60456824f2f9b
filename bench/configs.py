"""gateway.yaml files for the benchmark daemons: open DMs, no rate limits, loopback only."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from chatgate.config.models import LoopChoice
from tests.fakes.telegram import TOKEN

BENCH_MODEL = "openai/gpt-4o-mini"
BENCH_API_KEY = "sk-bench-not-a-secret"
FLOOR_MODEL_ARGS = ("--model", BENCH_MODEL, "--api-key", BENCH_API_KEY)
WEBHOOK_SECRET = "bench-webhook-secret-0123456789"
HOOK_PATH = "/hooks/bench"
SESSION_HOOK_PATH = "/hooks/sessions"
LLM_HOOK_PATH = "/hooks/llm"
# gateway.event_loop of every benchmark daemon (and of the in-process pipeline); `--event-loop`.
EVENT_LOOP: LoopChoice = "auto"


@dataclass
class DaemonConfig:
    """The knobs the scenarios turn; ``write`` renders a complete gateway.yaml."""

    port: int
    llm_base: str | None = None
    telegram_base: str | None = None
    telegram_agent: str = "default"
    webhook: bool = False
    discord: dict[str, Any] | None = None  # a channels.discord section (see bench.scenarios.dcrig)
    slack: dict[str, Any] | None = None  # a channels.slack section (see bench.scenarios.slackrig)
    whatsapp: dict[str, Any] | None = None  # channels.whatsapp (see bench.scenarios.whatsapp)
    matrix: dict[str, Any] | None = None  # channels.matrix (see bench.scenarios.matrix)
    teams: dict[str, Any] | None = None  # channels.teams (see bench.scenarios.teams)
    memory: dict[str, Any] = field(default_factory=dict)
    extra_channels: dict[str, Any] = field(default_factory=dict)  # e.g. channels.email
    warm_max: int = 20_000
    log_level: str = "info"
    gateway_extra: dict[str, Any] = field(default_factory=dict)  # e.g. store/turn_lock/redis

    def document(self, state_dir: Path) -> dict[str, Any]:
        agents: dict[str, Any] = {"echo": {"backend": "echo"}}
        if self.llm_base is not None:
            agents["default"] = llm_agent(self.llm_base)
        else:
            agents["default"] = {"backend": "echo"}
        channels: dict[str, Any] = {}
        if self.telegram_base is not None:
            channels["telegram"] = {
                "token": TOKEN,
                "api_base": self.telegram_base,
                "dm_policy": "open",
                "agent": self.telegram_agent,
                "poll_timeout_s": 10,
                "request_timeout_s": 30,
            }
        if self.discord is not None:
            channels["discord"] = dict(self.discord)
        if self.slack is not None:
            channels["slack"] = dict(self.slack)
        if self.whatsapp is not None:
            channels["whatsapp"] = dict(self.whatsapp)
        if self.matrix is not None:
            channels["matrix"] = dict(self.matrix)
        if self.teams is not None:
            channels["teams"] = dict(self.teams)
        if self.webhook:
            channels["webhook"] = {"routes": webhook_routes()}
        channels.update(self.extra_channels)
        gateway: dict[str, Any] = {
            "http": {"host": "127.0.0.1", "port": self.port},
            "state_dir": str(state_dir),
            "rate_limits": {"per_sender": None, "per_chat": None},
            "sessions": {"warm_max": self.warm_max},
            "drain_timeout_s": 5,
            "log": {"level": self.log_level, "format": "json"},
            "event_loop": EVENT_LOOP,
        }
        if self.memory:
            gateway["memory"] = dict(self.memory)
        gateway.update(self.gateway_extra)
        return {"config_version": 1, "gateway": gateway, "agents": agents, "channels": channels}

    def write(self, directory: Path, name: str = "gateway.yaml") -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / name
        text = yaml.safe_dump(self.document(directory / "state"), sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path


def llm_agent(base_url: str) -> dict[str, Any]:
    return {
        "backend": "litellm",
        "model": BENCH_MODEL,
        "api_base": base_url,
        "api_key": BENCH_API_KEY,
        "timeout_s": 30,
    }


def webhook_routes() -> dict[str, Any]:
    """Signed sync routes: one-shot (echo), keyed by ``payload.s`` (echo), and keyed by
    ``payload.s`` on the default agent (litellm when the config has a model)."""
    common = {"secret": WEBHOOK_SECRET, "signature": "generic", "respond": "sync"}
    keyed = {"prompt": "{payload.text}", "session": "{payload.s}", **common}
    return {
        "bench": {"path": HOOK_PATH, "prompt": "{payload.text}", "agent": "echo", **common},
        "sessions": {"path": SESSION_HOOK_PATH, "agent": "echo", **keyed},
        "llm": {"path": LLM_HOOK_PATH, "agent": "default", **keyed},
    }


def telegram_api_base(fake_base_url: str) -> str:
    """FakeTelegram.base_url ends in /bot; chatgate's api_base is the origin."""
    return fake_base_url.removesuffix("/bot")
