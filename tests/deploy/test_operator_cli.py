"""The operator CLI on a server: `chatgate init` writes the starter config a pip install lacks,
`chatgate run` without a config names every place it looked, and from a plain operator shell
(none of the unit's environment) `chatgate status` finds the system daemon through /etc/chatgate."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from chatgate.cli import common
from chatgate.cli.api_client import _tried
from chatgate.cli.init_cmd import EX_CANTCREAT, run_init, starter_text
from chatgate.cli.main import main
from chatgate.config.errors import EX_CONFIG
from tests.daemon import Daemon
from tests.harness import load, write_config

ROOT = Path(__file__).resolve().parents[2]
API_TOKEN = "Op3rAt0rTk9Lp2Rt5Yx7Cc1Bm4Hd9Gf"


def test_the_wheel_carries_the_shipped_starter_config() -> None:
    assert starter_text() == (ROOT / "gateway.yaml").read_text(), (
        "copy gateway.yaml to chatgate/cli/starter.yaml"
    )


def test_init_writes_a_valid_config_and_never_overwrites_one(tmp_path: Path) -> None:
    target = tmp_path / "etc" / "gateway.yaml"
    assert run_init(str(target), force=False) == 0
    assert target.read_text() == starter_text()
    assert load(target).config.gateway.http.port == 8765
    target.write_text("# mine\n")
    assert run_init(str(target), force=False) == EX_CANTCREAT
    assert target.read_text() == "# mine\n"
    assert run_init(str(target), force=True) == 0


def test_run_without_a_config_names_every_path_it_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CHATGATE_CONFIG", raising=False)
    monkeypatch.setattr(common, "SYSTEM_DIR", tmp_path / "etc-chatgate")
    with pytest.raises(SystemExit) as exited:
        main(["run"])
    assert exited.value.code == EX_CONFIG
    err = capsys.readouterr().err
    assert "$CHATGATE_CONFIG (unset)" in err and f"./gateway.yaml ({tmp_path})" in err
    assert str(tmp_path / "etc-chatgate" / "gateway.yaml") in err and "chatgate init" in err


def test_env_file_values_and_the_caller_environment_layer_over_the_unit_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = tmp_path / "etc"
    system.mkdir()
    (system / "env").write_text("# secrets\nCHATGATE_API_TOKEN='from-file'\nOPENAI_API_KEY=k\n\n")
    monkeypatch.setattr(common, "SYSTEM_DIR", system)
    monkeypatch.setenv("OPENAI_API_KEY", "from-shell")
    monkeypatch.delenv("CHATGATE_STATE_DIR", raising=False)
    env = common.config_env(system / "gateway.yaml")
    assert env["CHATGATE_STATE_DIR"] == common.SYSTEM_STATE_DIR
    assert env["CHATGATE_API_TOKEN"] == "from-file" and env["OPENAI_API_KEY"] == "from-shell"
    assert "CHATGATE_API_TOKEN" not in common.config_env(tmp_path / "gateway.yaml")


def test_a_refused_token_says_what_was_tried(tmp_path: Path) -> None:
    loaded = load(write_config(tmp_path, "agents:\n  default: {backend: echo}\n"))
    said = _tried(loaded, None)
    assert f"no {loaded.state_dir / 'api.json'}" in said and "api_token" in said
    assert "--url given" in _tried(loaded, "http://127.0.0.1:1")


async def test_status_from_an_operator_shell_finds_the_system_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    system, state = tmp_path / "etc", tmp_path / "var"
    assert run_init(str(system / "gateway.yaml"), force=False) == 0
    (system / "env").write_text(f"CHATGATE_API_TOKEN={API_TOKEN}\n")
    unit_env = {  # what the systemd unit gives the daemon
        "CHATGATE_CONFIG": str(system / "gateway.yaml"),
        "CHATGATE_STATE_DIR": str(state),
        "CHATGATE_API_TOKEN": API_TOKEN,
        "CHATGATE_PORT": "0",
    }
    daemon = await Daemon(system / "gateway.yaml", env=unit_env).start()
    try:
        monkeypatch.chdir(tmp_path)  # no ./gateway.yaml here
        for name in ("CHATGATE_CONFIG", "CHATGATE_STATE_DIR", "CHATGATE_API_TOKEN"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setattr(common, "SYSTEM_DIR", system)
        monkeypatch.setattr(common, "SYSTEM_STATE_DIR", str(state))
        assert await asyncio.to_thread(main, ["status"]) == 0
        assert "chatgate" in capsys.readouterr().out
    finally:
        await daemon.terminate()


def test_an_unwritable_state_dir_gets_the_chown_command(tmp_path: Path) -> None:
    from chatgate.cli.run_cmd import _ownership_hint

    hint = _ownership_hint(PermissionError(13, "Permission denied"), tmp_path)
    assert f"chown -R {os.getuid()}:{os.getgid()} {tmp_path}" in hint
    assert _ownership_hint(OSError(98, "Address already in use"), tmp_path) == ""


def test_no_daemon_names_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, "agents:\n  default: {backend: echo}\n")
    with pytest.raises(SystemExit) as exited:
        main(["status", "--config", str(path), "--url", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert exited.value.code == 69
    assert f"{load(path).state_dir / 'api.json'} (not found; state dir from {path})" in err
