"""`chatgate doctor --json/--only/--skip/--strict`: a document scripts can parse, exit codes 0/1/2/78."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatgate.cli.main import main
from chatgate.config.errors import EX_CONFIG

SECRET = "whsec-json-doctor-SECRET-93"


def write(tmp_path: Path, routes: str = "") -> Path:
    path = tmp_path / "gateway.yaml"
    channels = f"channels:\n  webhook:\n    routes:\n{routes}" if routes else ""
    path.write_text(
        f"config_version: 1\ngateway: {{state_dir: {tmp_path / 'state'}}}\n"
        f"agents: {{default: {{backend: echo}}}}\n{channels}"
    )
    return path


def doctor(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["doctor", "--offline", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_json_is_one_document_with_stable_ids_severity_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    signed = f"      gh: {{path: /hooks/gh, secret: {SECRET}}}\n"
    code, doc = doctor(capsys, "--config", str(write(tmp_path, signed)))

    ids = [c["id"] for c in doc["checks"]]
    assert ids[:3] == ["config.version", "config.load", "state.dir"]
    assert "webhook.gh.secret" in ids and "agent.default.backend" in ids
    assert all(set(c) == {"id", "severity", "detail", "key", "fix"} for c in doc["checks"])
    state = next(c for c in doc["checks"] if c["id"] == "state.dir")
    assert state["severity"] == "warn" and "doctor --fix" in state["fix"]  # not created yet
    assert doc["exit_code"] == code == 0
    assert doc["summary"]["warn"] == 1
    assert SECRET not in json.dumps(doc)


def test_strict_turns_warnings_into_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write(tmp_path))
    assert doctor(capsys, "--config", path, "--strict")[0] == 1
    # The only warning is the state dir; leaving it out makes --strict pass again.
    code, doc = doctor(capsys, "--config", path, "--strict", "--skip", "state")
    assert code == 0 and "state.dir" not in [c["id"] for c in doc["checks"]]


def test_only_selects_by_id_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    routes = f"      a: {{path: /hooks/a, secret: {SECRET}}}\n      b: {{path: /hooks/b, signature: none}}\n"
    code, doc = doctor(capsys, "--config", str(write(tmp_path, routes)), "--only", "webhook.")
    assert [c["id"] for c in doc["checks"]] == ["webhook.a.secret", "webhook.b.secret"]
    assert [c["severity"] for c in doc["checks"]] == ["ok", "warn"]
    assert code == 0


def test_failed_check_exits_2_and_invalid_config_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    path = tmp_path / "gateway.yaml"
    path.write_text(
        f"config_version: 1\ngateway: {{state_dir: {blocker / 'state'}}}\n"
        "agents: {default: {backend: echo}}\n"
    )
    code, doc = doctor(capsys, "--config", str(path), "--fix")
    state = next(c for c in doc["checks"] if c["id"] == "state.dir")
    assert code == 2 and state["severity"] == "fail" and state["key"] == "gateway.state_dir"

    path.write_text("config_version: 1\nagents: {default: {backend: nope}}\n")
    code, doc = doctor(capsys, "--config", str(path), "--skip", "config")
    assert code == EX_CONFIG  # an invalid config is never filtered away
    assert doc["exit_code"] == EX_CONFIG


@pytest.mark.parametrize("only", [["--skip", "config"], ["--only", "webhook."], []])
def test_an_invalid_config_is_shown_as_the_reason_for_78_whatever_the_filter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], only: list[str]
) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text("config_version: 1\nagents: {default: {backend: nope}}\n")
    code, doc = doctor(capsys, "--config", str(path), *only)
    [load] = [c for c in doc["checks"] if c["id"] == "config.load"]
    assert code == doc["exit_code"] == EX_CONFIG
    assert load["severity"] == "fail" and "agents.default.backend" in load["detail"]


def test_the_supply_chain_is_checked_on_an_invalid_or_missing_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `docker run IMAGE doctor --only supply` does with the image's config and no token."""
    path = tmp_path / "gateway.yaml"
    path.write_text("config_version: 1\nagents: {default: {backend: nope}}\n")
    for config in (path, tmp_path / "missing.yaml"):
        code, doc = doctor(capsys, "--config", str(config), "--only", "supply")
        assert code == doc["exit_code"] == 0
        assert {c["id"] for c in doc["checks"]} == {"supply.pth", "supply.known_bad"}
