"""build_agents: one agent per backend, import failures as config errors, litellm stays unimported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chatgate.agents.echo import EchoAgent
from chatgate.agents.http_agent import HttpAgent
from chatgate.agents.litellm_agent import LiteLLMAgent
from chatgate.agents.python_callable import PythonAgent
from chatgate.agents.registry import build_agents
from chatgate.config.errors import EX_CONFIG, ConfigError
from chatgate.config.models import GatewayConfig

REPO_ROOT = Path(__file__).resolve().parents[2]


def gateway(agents: dict[str, Any]) -> GatewayConfig:
    return GatewayConfig.model_validate({"agents": agents})


def test_builds_one_agent_per_backend() -> None:
    config = gateway(
        {
            "llm": {"backend": "litellm", "model": "openai/gpt-4o-mini"},
            "echo": {"backend": "echo"},
            "py": {"backend": "python", "function": "tests.agents.callables:given_result"},
            "svc": {"backend": "http", "url": "http://127.0.0.1:9/agent"},
        }
    )

    agents = build_agents(config, {})

    assert {name: type(agent) for name, agent in agents.items()} == {
        "llm": LiteLLMAgent,
        "echo": EchoAgent,
        "py": PythonAgent,
        "svc": HttpAgent,
    }
    assert all(agent.name == name for name, agent in agents.items())


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("tests.agents.no_such_module:handler", "No module named"),
        ("tests.agents.callables:missing", "'missing' is not a callable"),
        ("tests.agents.callables:NOT_CALLABLE", "'NOT_CALLABLE' is not a callable"),
        ("tests.agents.explodes_on_import:handler", "module-level setup failed"),
    ],
)
def test_unloadable_python_function_is_a_config_error(function: str, message: str) -> None:
    config = gateway({"broken": {"backend": "python", "function": function}})

    with pytest.raises(ConfigError) as caught:
        build_agents(config, {})

    [issue] = caught.value.issues
    assert issue.path == ("agents", "broken", "function")
    assert message in issue.message
    assert "agents.broken.function" in str(caught.value)
    assert caught.value.exit_code == EX_CONFIG


def test_every_unloadable_function_is_reported_at_once() -> None:
    config = gateway(
        {
            "a": {"backend": "python", "function": "tests.agents.no_such_module:f"},
            "ok": {"backend": "echo"},
            "b": {"backend": "python", "function": "tests.agents.callables:missing"},
        }
    )

    with pytest.raises(ConfigError) as caught:
        build_agents(config, {})

    assert [issue.path for issue in caught.value.issues] == [
        ("agents", "a", "function"),
        ("agents", "b", "function"),
    ]


def test_building_agents_does_not_import_litellm() -> None:
    script = (
        "import sys\n"
        "import chatgate.agents.registry\n"
        "from chatgate.agents.registry import build_agents\n"
        "from chatgate.config.models import GatewayConfig\n"
        "cfg = GatewayConfig.model_validate(\n"
        "    {'agents': {'llm': {'backend': 'litellm', 'model': 'openai/x'}}})\n"
        "build_agents(cfg, {})\n"
        "print('litellm' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
