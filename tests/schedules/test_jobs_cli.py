"""`chatgate jobs ...` against a running in-process gateway (the CLI runs in a worker thread)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from chatgate.cli.main import main
from tests.fakes.clock import ManualClock
from tests.harness import memory, running, write_config
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


async def test_send_delivers_with_a_message_id_and_needs_the_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chatgate.model.messages import Target
    from chatgate.model.reasons import SendErrorKind
    from tests.harness import http, operator, url

    path = config(tmp_path, "  {}\n")
    async with (
        running(path, clock=ManualClock()) as gw,
        http() as client,
    ):  # the bucket never refills
        cli_config = tmp_path / "cli.yaml"
        cli_config.write_text(f"config_version: 1\ngateway:\n  state_dir: {tmp_path / 'state'}\n")

        def send(*args: str) -> int:
            try:
                return main(["send", *args, "--config", str(cli_config)])
            except SystemExit as exc:
                return int(exc.code or 0)

        assert await asyncio.to_thread(send, "memory:ops", "deploy finished") == 0
        assert "sent to memory:ops: message 1" in capsys.readouterr().out
        assert memory(gw).texts("ops") == ["deploy finished"]
        body = {"to": "memory:ops", "text": "x"}
        async with client.post(url(gw, "/api/send"), json=body) as resp:
            assert resp.status == 401  # no token, no send
        async with client.post(
            url(gw, "/api/send"), json={"to": "nowhere:1", "text": "x"}, headers=operator(gw)
        ) as resp:
            assert resp.status == 400
            assert "not configured" in (await resp.json())["error"]
        await gw.rt.dead_targets.mark(Target("memory", "gone"), SendErrorKind.FORBIDDEN, "", 0)
        assert await asyncio.to_thread(send, "memory:gone", "hello?") == 69
        assert "not delivered to memory:gone: forbidden" in capsys.readouterr().out
        assert await gw.rt.dead_letters.count() == 1
        for _ in range(30):  # the burst is 30 for the whole API
            async with client.post(url(gw, "/api/send"), json=body, headers=operator(gw)) as resp:
                last = resp.status
        assert last == 429


def test_a_past_at_in_the_file_is_a_warning_of_config_check_not_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(
        tmp_path,
        """
channels:
  telegram: {token: "123:abc"}
schedules:
  once:
    at: "2020-01-02T09:00:00+01:00"
    prompt: "hi"
    deliver: {to: "telegram:42"}
""",
    )
    try:
        code = main(["config", "check", "-c", str(path)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "warning: schedules.once.at: 2020-01-02T09:00:00+01:00 has passed" in out
    assert "gateway.yaml:" in out  # the line it is on


async def test_at_without_an_offset_is_named_and_times_show_their_zone_to_the_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        path = config(tmp_path, "  {}\n")
        async with running(path, clock=ManualClock(wall_start=T0)):
            code, out = await cli(
                capsys, path, "add", "naive", "--at", "2030-01-01T09:00", "--prompt", "p",
                "--to", "memory:ops",
            )  # fmt: skip
            assert code == 64 and "at: needs a UTC offset" in out, out
            code, out = await cli(
                capsys, path, "add", "precise", "--at", "2030-01-01T09:00:00.123456+01:00",
                "--prompt", "p", "--to", "memory:ops",
            )  # fmt: skip
            assert code == 0, out
            assert "at 2030-01-01T09:00:00+01:00  → memory:ops" in out
            assert "next: 2030-01-01 09:00:00+01:00" in out
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
