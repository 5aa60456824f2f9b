"""`chatgate reload` of a file that did not change says so (and why that happens behind a
single-file bind mount) instead of "config reloaded"; an edit is still applied."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from chatgate.cli.status_cmd import run_reload
from tests.harness import load, running, write_config

BODY = "agents:\n  default: {backend: echo}\n"


async def test_an_unchanged_file_is_reported_and_an_edit_applied(tmp_path: Path) -> None:
    path = write_config(tmp_path, BODY)
    async with running(path) as gw:
        same = await gw.reload()
        assert same["ok"] and same["unchanged"] and same["path"] == str(path)
        # What an editor does: write a new file and rename it over the old one (a new inode).
        replacement = path.with_name("gateway.yaml.new")
        replacement.write_text(
            path.read_text().replace("{backend: echo}", "{backend: echo, prefix: 'x '}")
        )
        os.replace(replacement, path)
        edited = await gw.reload()
        assert edited["ok"] and edited["unchanged"] is False
        assert (await gw.reload())["unchanged"]


async def test_the_cli_explains_an_unchanged_reload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, BODY)
    async with running(path):
        assert await asyncio.to_thread(run_reload, load(path), url=None) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"config unchanged: {path}") and "mount the config's directory" in out
    assert "config reloaded" not in out
