"""`chatgate config show|migrate|check` through the CLI entry point, in-process (no subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from chatgate.cli.main import main
from chatgate.config.errors import EX_CONFIG
from chatgate.config.redact import REDACTED
from tests.config.support import STRONG_TOKEN, write_config

LEGACY = """\
# an old config
channels:
  telegram:
    token: ${TG_TOKEN_FOR_CLI_TEST}   # from env
    allowed_users: "1, 2"
  webhook:
    routes:
      a: {path: /hooks/a, secret: s}
"""

SECRET_CONFIG = f"""
gateway:
  api_token: {STRONG_TOKEN}
  redis: {{url: "redis://:cli-redis-PW-77@10.0.0.5:6379/0"}}
agents:
  default: {{backend: http, url: "https://agent.example.com", api_key: cli-http-KEY-88}}
channels:
  telegram: {{token: "999:cli-TG-TOKEN-99"}}
"""
SECRETS = (STRONG_TOKEN, "cli-redis-PW-77", "cli-http-KEY-88", "999:cli-TG-TOKEN-99")


def _exit_code(argv: list[str]) -> int:
    """Run the CLI; commands either return a code or raise SystemExit(code)."""
    try:
        return main(argv)
    except SystemExit as exc:
        assert isinstance(exc.code, int)
        return exc.code


def test_show_redacts_every_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, SECRET_CONFIG)
    assert _exit_code(["config", "show", "--config", str(path)]) == 0
    out, err = capsys.readouterr()
    leaked = [secret for secret in SECRETS if secret in out + err]
    assert not leaked, out
    shown = yaml.safe_load(out)
    assert shown["gateway"]["api_token"] == REDACTED
    assert shown["gateway"]["redis"]["url"] == REDACTED
    assert shown["agents"]["default"]["api_key"] == REDACTED
    assert shown["agents"]["default"]["url"] == "https://agent.example.com"
    assert shown["channels"]["telegram"]["token"] == REDACTED


def test_check_prints_summary_and_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, "channels:\n  telegram: {token: t}\n")
    assert _exit_code(["config", "check", "-c", str(path)]) == 0
    out, _ = capsys.readouterr()
    assert f"{path}: OK (config_version 1; agents: default; channels: telegram)" in out
    assert "warning: config has no config_version stamp" in out


def test_migrate_then_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(LEGACY, encoding="utf-8")
    assert _exit_code(["config", "migrate", "--config", str(path)]) == 0
    out, _ = capsys.readouterr()
    assert "applied: allowed_users/blocked_users/allowed_chats" in out
    assert "applied: group_policy missing" in out
    assert "applied: stamped config_version: 1" in out
    assert f"original saved as {path}.bak" in out
    assert f"{path}: migrated config is valid" in out
    migrated = path.read_text(encoding="utf-8")
    assert "# an old config" in migrated
    assert "# from env" in migrated
    data = yaml.safe_load(migrated)
    assert data["config_version"] == 1
    assert data["channels"]["telegram"]["allowed_users"] == ["1", "2"]
    assert data["channels"]["telegram"]["group_policy"] == "mention_only"
    assert "group_policy" not in data["channels"]["webhook"]
    assert path.with_name("gateway.yaml.bak").read_text(encoding="utf-8") == LEGACY

    assert _exit_code(["config", "migrate", "--config", str(path)]) == 0
    out, _ = capsys.readouterr()
    assert out.strip() == f"{path}: already current, nothing to migrate"
    assert path.read_text(encoding="utf-8") == migrated
    assert path.with_name("gateway.yaml.bak").read_text(encoding="utf-8") == LEGACY


def test_migrate_dry_run_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(LEGACY, encoding="utf-8")
    assert _exit_code(["config", "migrate", "--config", str(path), "--dry-run"]) == 0
    out, _ = capsys.readouterr()
    assert "would apply: allowed_users" in out
    assert "would apply: stamped config_version: 1" in out
    assert path.read_text(encoding="utf-8") == LEGACY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gateway.yaml"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("config_version: 2\ngateway: {}\n", "2 is newer than this chatgate supports (1)"),
        ("gateway: {}\ngateway: {}\n", "gateway: duplicate key"),
        ("gateway: [1\n", "YAML syntax error"),
    ],
)
def test_migrate_refuses_with_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, fragment: str
) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(text, encoding="utf-8")
    assert _exit_code(["config", "migrate", "--config", str(path)]) == EX_CONFIG
    _, err = capsys.readouterr()
    assert err.startswith(f"chatgate: {path}: cannot migrate: ")
    assert fragment in err
    assert path.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gateway.yaml"]


def test_migrate_missing_file_exits_78(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "absent.yaml"
    assert _exit_code(["config", "migrate", "--config", str(path)]) == EX_CONFIG
    assert "no such config file" in capsys.readouterr().err


def test_migrated_but_still_invalid_exits_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text("channels:\n  telegram:\n    dm_policy: everyone\n", encoding="utf-8")
    assert _exit_code(["config", "migrate", "--config", str(path)]) == EX_CONFIG
    out, err = capsys.readouterr()
    assert "applied: group_policy missing" in out
    assert "channels.telegram.dm_policy: 'everyone' is not one of" in err
    assert "(gateway.yaml:4)" in err  # line numbers refer to the migrated file


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("!!bool maybe", "not a valid bool value"),
        ("!!timestamp soon", "not a valid timestamp value"),
        ("!!int 0xZZ", "not a valid int value"),
        ("!!binary '###'", "unsupported YAML tag !!binary"),
        ("!!set {a: 1}", "unsupported YAML tag !!set"),
        ("!!omap [a: 1]", "unsupported YAML tag !!omap"),
        ("!!str [1, 2]", "the tag !!str does not fit a list"),
        ("!!seq x", "the tag !!seq does not fit a single value"),
        ("!local x", "unsupported YAML tag !local"),
        ("!!python/name:os.system x", "unsupported YAML tag !!python/name:os.system"),
    ],
)
def test_an_explicit_yaml_tag_that_cannot_hold_its_value_is_exit_78_naming_key_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, fragment: str
) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(f"gateway:\n  failure_replies: {value}\n", encoding="utf-8")
    assert _exit_code(["config", "check", "-c", str(path)]) == EX_CONFIG
    _, err = capsys.readouterr()
    assert "gateway.failure_replies" in err and fragment in err and "gateway.yaml:2" in err, err
