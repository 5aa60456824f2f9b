"""`chatgate jobs ...` against a running in-process gateway (the CLI runs in a worker thread)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from chatgate.cli.main import main
from tests.fakes.clock import ManualClock
from tests.harness import memory, running
from tests.schedules.test_scheduler import T0, config


async def cli(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, str]:
    """The CLI finds the daemon through the state directory (the memory channel is a test
    plugin the CLI does not know, so it reads a config naming only the state directory)."""
    cli_config = path.parent / "cli.yaml"
    state = path.parent / "state"
    cli_config.write_text(f"config_version: 1\ngateway:\n  state_dir: {state}\n")

    def call() -> int:
        try:
            return main(["jobs", *args, "--config", str(cli_config)])
        except SystemExit as exc:
            return int(exc.code or 0)

    code = await asyncio.to_thread(call)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


async def test_add_list_run_history_pause_remove(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = ManualClock(wall_start=T0)
    path = config(tmp_path, "  {}\n")
    async with running(path, clock=clock) as gw:
        code, out = await cli(
            capsys, path, "add", "digest", "--cron", "0 9 * * *", "--tz", "Europe/Berlin",
            "--prompt", "daily digest", "--to", "memory:ops",
        )  # fmt: skip
        assert code == 0, out
        assert "digest  [active]  cron '0 9 * * *' Europe/Berlin  → memory:ops" in out
        code, out = await cli(capsys, path, "add", "digest", "--every", "60", "--prompt", "x",
                              "--to", "memory:ops")  # fmt: skip
        assert code == 64 and "exists" in out
        code, out = await cli(capsys, path, "run", "digest")
        assert code == 0 and "run_now" in out
        await memory(gw).wait_sent(1)
        await gw.pipeline.scheduler.wait_idle(5)
        code, out = await cli(capsys, path, "history", "digest", "--json")
        history = json.loads(out)["history"]
        assert [h["reason"] for h in history] == ["run_now"]
        assert history[0]["runs"][0]["outcome"] == "delivered"
        code, out = await cli(capsys, path, "pause", "digest")
        assert "[paused]" in out
        code, out = await cli(capsys, path, "list")
        assert "digest  [paused]" in out and "run_now → delivered" in out
        code, out = await cli(capsys, path, "rm", "digest")
        assert code == 0 and "removed job digest" in out
        code, out = await cli(capsys, path, "show", "digest")
        assert code != 0 and "no job 'digest'" in out
