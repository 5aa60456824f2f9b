"""The real `chatgate` CLI in a subprocess: exit 78 naming key path and line, no secrets shown.

Every command runs in its own tmp dir; they are started together and then awaited, so the module
costs about one interpreter start-up per CPU. `config show|migrate` run in-process in
test_cli_commands.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatgate.config.errors import EX_CONFIG
from tests.config.support import STRONG_TOKEN, catalog, yaml_text

CHATGATE = Path(sys.executable).with_name("chatgate")
SHIPPED = Path(__file__).resolve().parents[2] / "gateway.yaml"
TIMEOUT_S = 60

ENV_SECRET = "sk-env-OPENAI-4r5t6y7u"
FILE_SECRET = "777:tg-FILE-SECRET-z1x2c3"
REDIS_PASSWORD = "redis-PW-q1w2e3r4"
HOOK_SECRET = "hook-SECRET-a9s8d7f6"
API_TOKEN = "cli-API-TOKEN-" + STRONG_TOKEN
SECRETS = (ENV_SECRET, FILE_SECRET, REDIS_PASSWORD, HOOK_SECRET, API_TOKEN)

TEMPLATE = """\
config_version: 1
gateway:
  http: {{host: {host}, port: {port}}}
  state_dir: state
  redis: {{url: "redis://:{redis_password}@127.0.0.1:6379/0"}}
  api_token: "{api_token}"
agents:
  default:
    backend: litellm
    model: {model}
    api_key: ${{OPENAI_API_KEY}}
channels:
  telegram:
    token_file: tg.token
    dm_policy: pairing
    group_policy: {group_policy}
  webhook:
    routes:
      deploy:
        path: /hooks/deploy
        secret: "{hook_secret}"
{extra}"""


def _config(port: int, **overrides: str) -> str:
    values = {
        "host": "127.0.0.1",
        "port": str(port),
        "redis_password": REDIS_PASSWORD,
        "api_token": API_TOKEN,
        "model": "openai/gpt-4o-mini",
        "group_policy": "mention_only",
        "hook_secret": HOOK_SECRET,
        "extra": "",
    }
    values.update(overrides)
    return TEMPLATE.format(**values)


# (name, overrides, key path, line, message fragment)
BROKEN = [
    (
        "bad-literal",
        {"group_policy": "mentions"},
        "channels.telegram.group_policy",
        16,
        "'mentions' is not one of respond_all, mention_only, command_only, observe",
    ),
    (
        "unknown-agent",
        {"extra": "        agent: deployer\n"},
        "channels.webhook.routes.deploy.agent",
        22,
        "unknown agent 'deployer'",
    ),
    (
        "duplicate-key",
        {"extra": "        path: /hooks/again\n"},
        "channels.webhook.routes.deploy.path",
        22,
        "duplicate key",
    ),
    (
        "required-env",
        {"model": "${CHATGATE_MODEL:?must name the model}"},
        "agents.default.model",
        10,
        "environment variable CHATGATE_MODEL must name the model",
    ),
    (
        "api-token-off-loopback",
        {"host": "0.0.0.0", "api_token": "${CHATGATE_API_TOKEN:-}"},
        "gateway.api_token",
        6,
        "required when gateway.http.host (0.0.0.0) is not loopback",
    ),
]


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str
    cwd: Path

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass(frozen=True)
class Command:
    args: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str]


def _base_env(home: Path) -> dict[str, str]:
    """A clean environment: no CHATGATE_* / API keys / proxies from the developer's shell."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_OFFLINE_MODE": "true",
        "NO_PROXY": "127.0.0.1,localhost",
    }


def _run_all(commands: Mapping[str, Command]) -> dict[str, Result]:
    """Start every command at once, then collect them (killing any that hang)."""
    procs = {
        name: (
            subprocess.Popen(
                [str(CHATGATE), *cmd.args],
                cwd=cmd.cwd,
                env=dict(cmd.env),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
            cmd.cwd,
        )
        for name, cmd in commands.items()
    }
    results: dict[str, Result] = {}
    for name, (proc, cwd) in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            stderr += "\n<killed: timed out>"
        results[name] = Result(proc.returncode, stdout, stderr, cwd)
    return results


@pytest.fixture(scope="module")
def held_port() -> Iterator[int]:
    """A port we keep bound: a daemon that got as far as binding would fail with 71, not 78."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory, held_port: int) -> dict[str, Result]:
    home = tmp_path_factory.mktemp("home")
    env = _base_env(home) | {"OPENAI_API_KEY": ENV_SECRET}
    commands: dict[str, Command] = {}
    for name, overrides, *_ in BROKEN:
        for action in (("config", "check"), ("run",)):
            work = tmp_path_factory.mktemp(f"{name}-{action[-1]}")
            (work / "tg.token").write_text(f"{FILE_SECRET}\n", encoding="utf-8")
            (work / "gateway.yaml").write_text(_config(held_port, **overrides), encoding="utf-8")
            args = (*action, "--config", "gateway.yaml")
            commands[f"{action[-1]}:{name}"] = Command(args, work, env)

    shipped = tmp_path_factory.mktemp("shipped")
    commands["check:shipped"] = Command(
        ("config", "check", "--config", str(SHIPPED)), shipped, _base_env(home)
    )

    return _run_all(commands)


@pytest.mark.parametrize("command", ["check", "run"])
@pytest.mark.parametrize(
    ("name", "path", "line", "fragment"),
    [pytest.param(name, path, line, fragment, id=name) for name, _, path, line, fragment in BROKEN],
)
def test_invalid_config_exits_78_with_path_and_line(
    results: dict[str, Result], command: str, name: str, path: str, line: int, fragment: str
) -> None:
    result = results[f"{command}:{name}"]
    assert result.code == EX_CONFIG, result
    assert result.stdout == ""
    assert result.stderr.startswith("chatgate: invalid config: ")
    reported = [ln for ln in result.stderr.splitlines() if f"{path}: " in ln]
    assert len(reported) == 1, result.stderr
    assert fragment in reported[0]
    assert reported[0].endswith(f"(gateway.yaml:{line})")
    assert "Traceback" not in result.stderr
    leaked = [secret for secret in SECRETS if secret in result.output]
    assert not leaked, result.output
    assert not (result.cwd / "state").exists(), "the daemon started before validating"


def test_check_passes_on_shipped_config(results: dict[str, Result]) -> None:
    result = results["check:shipped"]
    assert result.code == 0, result
    assert result.stdout.startswith(f"{SHIPPED}: OK (config_version 1; agents: default, echo;")
    assert result.stderr == ""


def test_templates_are_valid_without_the_injected_error(tmp_path: Path) -> None:
    """Guards the table above: each broken config differs from a valid one by its one error."""
    from chatgate.config import load_config

    (tmp_path / "tg.token").write_text(FILE_SECRET, encoding="utf-8")
    (tmp_path / "gateway.yaml").write_text(yaml_text(_config(8765)), encoding="utf-8")
    loaded = load_config(
        tmp_path / "gateway.yaml", env={"OPENAI_API_KEY": ENV_SECRET}, catalog=catalog()
    )
    assert ENV_SECRET in loaded.secrets
