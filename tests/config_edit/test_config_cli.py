"""`chatgate config history` and `chatgate config rollback N` against a running gateway, and
the history read from the state store itself when no daemon answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from chatgate.cli.main import main
from tests.config_edit.test_config_api import call, edited
from tests.harness import running, write_config

NEW_LIMIT = "{rate_per_s: 0.001, burst: 1}"
CONFIG = """  rate_limits:
    per_sender: {rate_per_s: 5, burst: 50}
agents:
  default: {backend: echo}
"""  # no channel: the CLI loads the file with the installed channels only


async def test_rollback_puts_back_the_kept_version_and_is_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, CONFIG)
    original = path.read_text()
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        text = edited(view["text"], "{rate_per_s: 5, burst: 50}", NEW_LIMIT)
        status, _ = await call(
            gw, "POST", "/api/config/apply", {"text": text, "etag": view["etag"]}
        )
        assert status == 200
        assert gw.loaded.config.gateway.rate_limits.per_sender.burst == 1  # type: ignore[union-attr]

        args = ["config", "rollback", "1", "--config", str(path)]
        assert await asyncio.to_thread(main, args) == 0
        out = capsys.readouterr().out
        assert "put back version 1; the replaced file is kept as gateway.yaml.1" in out
        assert path.read_text() == original
        assert NEW_LIMIT in (tmp_path / "gateway.yaml.1").read_text()
        assert gw.loaded.config.gateway.rate_limits.per_sender.burst == 50  # type: ignore[union-attr]

        with pytest.raises(SystemExit) as refused:
            await asyncio.to_thread(main, ["config", "rollback", "7", "--config", str(path)])
        assert refused.value.code == 1
        assert "config_no_backup" in capsys.readouterr().err

        assert await asyncio.to_thread(main, ["config", "history", "--config", str(path)]) == 0
        shown = capsys.readouterr().out
    refused, first, second = (line for line in shown.splitlines() if line.startswith("#"))
    assert "rollback to gateway.yaml.7  cli · 127.0.0.1  refused: config_no_backup" in refused
    assert "rollback to gateway.yaml.1  cli · 127.0.0.1  +1 -1  kept gateway.yaml.1" in first
    assert "apply  api · 127.0.0.1  +1 -1  kept gateway.yaml.1" in second
    assert (
        "keys: gateway.rate_limits.per_sender.burst, gateway.rate_limits.per_sender.rate_per_s"
        in shown
    )

    # No daemon now: the history comes from the state store itself.
    offline = ["config", "history", "--json", "--config", str(path)]
    assert await asyncio.to_thread(main, offline) == 0
    changes = json.loads(capsys.readouterr().out)
    assert [(c["action"], c["refused"]) for c in changes] == [
        ("rollback to gateway.yaml.7", "config_no_backup"),
        ("rollback to gateway.yaml.1", None),
        ("apply", None),
    ]

    # No daemon: a rollback is made here, the same way (validated, kept, audited).
    rollback = ["config", "rollback", "1", "--config", str(path)]
    assert await asyncio.to_thread(main, rollback) == 0
    out = capsys.readouterr().out
    assert "reload: chatgate is not running; it reads the file when it starts" in out
    assert NEW_LIMIT in path.read_text() and (tmp_path / "gateway.yaml.1").read_text() == original
    assert await asyncio.to_thread(main, offline) == 0
    latest = json.loads(capsys.readouterr().out)[0]
    assert (latest["action"], latest["address"], latest["by"]) == (
        "rollback to gateway.yaml.1", "local", "cli",
    )  # fmt: skip
    assert latest["reload"] == {"ok": True, "not_running": True}
