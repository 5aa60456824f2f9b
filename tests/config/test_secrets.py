"""Secrets never show in errors or `config show`; API token strength and off-loopback rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, SecretStr

from chatgate.config.base import secret_value
from chatgate.config.redact import REDACTED, redacted_dict, render_yaml
from tests.config.support import STRONG_TOKEN, assert_issue, load, load_error, yaml_text

API_KEY = "sk-live-APIKEY-7f3a9c1e"
TG_TOKEN = "123456:TG-SECRET-q8w7e6r5"
HOOK_SECRET = "whsec-HOOK-5d4c3b2a"
API_TOKEN = "tok-API-TOKEN-" + STRONG_TOKEN
FILE_SECRET = "file-SECRET-a1b2c3d4"
REDIS_PASSWORD = "redisPW-9x8y7z6w"
ENV_SECRET = "env-SECRET-m4n5b6v7"
PLUGIN_SECRET = "teams-SECRET-p0o9i8u7"
SECRETS = (
    API_KEY,
    TG_TOKEN,
    HOOK_SECRET,
    API_TOKEN,
    FILE_SECRET,
    REDIS_PASSWORD,
    ENV_SECRET,
    PLUGIN_SECRET,
)
ENV = {"FALLBACK_KEY": ENV_SECRET}


class TeamsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    app_id: str
    app_password: SecretStr


PLUGINS: dict[str, type[BaseModel]] = {"teams": TeamsConfig}

# A valid config holding every kind of secret; the markers let each case inject one error.
BASE = f"""
config_version: 1
gateway:
  http: {{host: 0.0.0.0, port: 8765}}
  api_token: "{API_TOKEN}"
  redis:
    url: "redis://:{REDIS_PASSWORD}@127.0.0.1:6379/0"
  # GATEWAY
agents:
  default:
    backend: litellm
    model: openai/gpt-4o-mini
    api_key: "{API_KEY}"
    api_base: "https://proxy.example.com/v1?key={API_KEY}"
    fallbacks:
      - {{model: anthropic/claude-3-haiku, api_key: "${{FALLBACK_KEY}}"}}
channels:
  telegram:
    token: "{TG_TOKEN}"
    webhook: {{secret_token_file: tg_webhook_secret}}
    # TELEGRAM
  teams: {{app_id: a1, app_password: "{PLUGIN_SECRET}"}}
  webhook:
    routes:
      alert:
        path: /hooks/alert
        secret: "{HOOK_SECRET}"
"""


def _write_secret_file(directory: Path) -> None:
    (directory / "tg_webhook_secret").write_text(f"{FILE_SECRET}\n", encoding="utf-8")


def _assert_no_secret(text: str) -> None:
    leaked = [secret for secret in SECRETS if secret in text]
    assert not leaked, f"secrets leaked: {leaked}\n{text}"


def test_base_config_is_valid_and_collects_every_secret(tmp_path: Path) -> None:
    _write_secret_file(tmp_path)
    loaded = load(tmp_path, BASE, ENV, PLUGINS)
    assert loaded.channel("telegram") is not None
    assert secret_value(loaded.channels["telegram"].config.webhook.secret_token) == FILE_SECRET
    for secret in SECRETS:
        assert any(secret in known for known in loaded.secrets), secret


@pytest.mark.parametrize(
    ("marker", "replacement", "path"),
    [
        pytest.param("", "gatewya: {}\n", "gatewya", id="unknown-key"),
        pytest.param(
            "    # TELEGRAM",
            "    dm_policy: everybody",
            "channels.telegram.dm_policy",
            id="literal",
        ),
        pytest.param(
            "",
            "routes:\n  - {match: {channel: telegram}, agent: ghost}\n",
            "routes[0].agent",
            id="cross-check",
        ),
        pytest.param(
            "  # GATEWAY",
            "  empty_reply_text: ${REPLY:?}",
            "gateway.empty_reply_text",
            id="required-env",
        ),
        pytest.param("  # GATEWAY", "  http: {port: 1}", "gateway.http", id="duplicate-yaml-key"),
        pytest.param(
            "    # TELEGRAM",
            "    allowed_users: 1,2",
            "channels.telegram.allowed_users",
            id="legacy-csv",
        ),
        pytest.param(
            "  teams: {app_id: a1,", "  teams: {app_idd: a1,", "channels.teams.app_idd", id="plugin"
        ),
    ],
)
def test_errors_elsewhere_never_show_secrets(
    tmp_path: Path, marker: str, replacement: str, path: str
) -> None:
    _write_secret_file(tmp_path)
    text = yaml_text(BASE)
    text = text.replace(marker, replacement) if marker else text + replacement
    error = load_error(tmp_path, text, ENV, PLUGINS)
    assert any(f"{path}:" in line for line in error.render().splitlines()), error.render()
    _assert_no_secret(error.render())
    _assert_no_secret(repr(error.issues))


@pytest.mark.parametrize(
    ("text", "path", "line"),
    [
        pytest.param(
            f"agents:\n  default: {{backend: litellm, model: m, api_key: ['{API_KEY}']}}\n",
            "agents.default.api_key",
            2,
            id="secret-key-wrong-type",
        ),
        pytest.param(
            f"channels:\n  telegram:\n    token: {{value: '{TG_TOKEN}'}}\n",
            "channels.telegram.token",
            3,
            id="secret-key-mapping",
        ),
        pytest.param(
            f"channels:\n  telegram: '{TG_TOKEN}'\n",
            "channels.telegram",
            2,
            id="token-pasted-as-section",
        ),
        pytest.param(
            f"gateway:\n  redis: 'redis://:{REDIS_PASSWORD}@10.0.0.5/0'\n",
            "gateway.redis",
            2,
            id="redis-url-pasted-as-section",
        ),
        pytest.param(
            f"agents:\n  default: '{API_KEY}'\n",
            "agents.default",
            2,
            id="api-key-pasted-as-agent",
        ),
        pytest.param(
            "gateway:\n  http: {port: 8765}\n  api_token: 98127364501827364519283746\n",
            "gateway.api_token",
            3,
            id="api-token-as-number",
        ),
        pytest.param(
            "channels:\n  telegram:\n    token: t\n    dm_policy_file: tg_webhook_secret\n",
            "channels.telegram.dm_policy",
            4,
            id="file-secret-in-literal-field",
        ),
        pytest.param(
            "gateway:\n  http:\n    port_file: tg_webhook_secret\n",
            "gateway.http.port",
            3,
            id="file-secret-in-int-field",
        ),
    ],
)
def test_errors_at_secret_values_never_echo_them(
    tmp_path: Path, text: str, path: str, line: int
) -> None:
    _write_secret_file(tmp_path)
    error = load_error(tmp_path, text)
    issue_line = [i for i in error.issues if i.line == line]
    assert issue_line, error.render()
    assert path in error.render()
    _assert_no_secret(error.render())
    assert "98127364501827364519283746" not in error.render()


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("changeme", "placeholder"),
        ("secret", "placeholder"),
        ("my-xxxx-token-Zq8vN2kLp4Rt7Wx1", "placeholder"),
        ("Zq8vN2kLp4Rt7", "shorter than 24"),
        ("abababababababababababab12345", "fewer than 10 distinct"),
    ],
)
def test_weak_api_token_is_rejected_without_echo(tmp_path: Path, token: str, reason: str) -> None:
    error = load_error(tmp_path, f"gateway:\n  http: {{port: 8765}}\n  api_token: '{token}'\n")
    assert_issue(error, "gateway.api_token", 3, "too weak")
    assert reason in error.render()
    assert token not in error.render()


def test_strong_api_token_is_accepted(tmp_path: Path) -> None:
    loaded = load(tmp_path, "gateway:\n  api_token: ${TOKEN}\n", {"TOKEN": STRONG_TOKEN})
    assert secret_value(loaded.config.gateway.api_token) == STRONG_TOKEN


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "gateway.example.com"])
@pytest.mark.parametrize("token_line", ["", "  api_token: ${UNSET_TOKEN:-}\n"])
def test_api_token_required_off_loopback(tmp_path: Path, host: str, token_line: str) -> None:
    error = load_error(tmp_path, f"gateway:\n  http: {{host: '{host}'}}\n{token_line}")
    issue_line = 3 if token_line else 1
    assert_issue(
        error, "gateway.api_token", issue_line, f"required when gateway.http.host ({host})"
    )
    accepted = load(
        tmp_path, f"gateway:\n  http: {{host: '{host}'}}\n  api_token: {STRONG_TOKEN}\n"
    )
    assert accepted.config.gateway.http.host == host


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_api_token_optional_on_loopback(tmp_path: Path, host: str) -> None:
    loaded = load(tmp_path, f"gateway:\n  http: {{host: '{host}'}}\n")
    assert loaded.config.gateway.api_token is None


def test_config_show_redacts_every_secret(tmp_path: Path) -> None:
    _write_secret_file(tmp_path)
    loaded = load(tmp_path, BASE, ENV, PLUGINS)
    text = render_yaml(loaded)
    _assert_no_secret(text)
    data = redacted_dict(loaded)
    assert data["gateway"]["api_token"] == REDACTED
    assert data["gateway"]["redis"]["url"] == REDACTED
    default = data["agents"]["default"]
    assert default["api_key"] == REDACTED
    assert default["fallbacks"][0]["api_key"] == REDACTED
    assert default["api_base"] == f"https://proxy.example.com/v1?key={REDACTED}"
    telegram = data["channels"]["telegram"]
    assert telegram["token"] == REDACTED
    assert telegram["webhook"]["secret_token"] == REDACTED
    assert data["channels"]["webhook"]["routes"]["alert"]["secret"] == REDACTED
    assert data["channels"]["teams"]["app_password"] == REDACTED
    # non-secret values stay readable
    assert default["model"] == "openai/gpt-4o-mini"
    assert data["channels"]["webhook"]["routes"]["alert"]["path"] == "/hooks/alert"
