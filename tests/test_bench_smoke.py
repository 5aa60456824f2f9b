"""The benchmark harness works end to end, fast enough for `make test`.

`python -m bench --quick` on the in-process and webhook scenarios writes a well-formed
latest.json (with `*_ratio` fields) and prints its table; the TLS Bot API rig is checked the way
the telegram_tls_* scenarios use it (python-telegram-bot trusting a throwaway CA through
SSL_CERT_FILE), and the bare slack-bolt floor answers a Socket Mode DM, acking it only after its
reply. The Telegram, Discord and Slack daemon scenarios themselves need litellm imported in several
processes (seconds each) and run under `make bench`; so does `replicas` (a redis-server plus four
litellm daemons, ~35 s even with --quick).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from telegram import Bot
from telegram.error import NetworkError

from bench import report
from bench.cli import EXECUTION_ORDER, SCENARIOS
from bench.procs import Proc, started
from bench.scenarios.slackrig import dm_event, floor_argv
from bench.tls import loopback_tls
from tests.daemon import ROOT, cli_env
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import TOKEN, FakeTelegram

QUICK = ("pipeline", "webhook")
BUDGET_S = 20.0


def _check_summary(summary: Any, where: str) -> None:
    assert set(summary) == {"samples", "median", "min", "max"}, where
    assert len(summary["samples"]) == 1, where
    assert isinstance(summary["median"], int | float), where
    assert summary["min"] <= summary["median"] <= summary["max"], where


@pytest.mark.slow
def test_quick_bench_writes_results_with_ratios(tmp_path: Path) -> None:
    out = tmp_path / "latest.json"
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench", "--quick", "--only", ",".join(QUICK), "--out", str(out)],
        cwd=ROOT,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the bench's daemons and floors share its process group
    )
    try:
        stdout, stderr = proc.communicate(timeout=BUDGET_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"python -m bench --quick took longer than {BUDGET_S:.0f} s")
    assert proc.returncode == 0, stderr[-3000:]
    assert time.monotonic() - began < BUDGET_S

    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["quick"] is True and doc["reps"] == 1
    assert list(doc["scenarios"]) == list(QUICK)
    for name, result in doc["scenarios"].items():
        assert "error" not in result, (name, result.get("error"))
        assert result["metrics"], name
        for metric_name, metric in result["metrics"].items():
            where = f"{name}.{metric_name}"
            assert metric["better"] in ("higher", "lower"), where
            _check_summary(metric["chatgate"], where)
            if metric["floor"] is not None:
                _check_summary(metric["floor"], where)
                assert metric["ratio"] is None or metric["ratio"] >= 0, where
                assert result["ratios"][f"{metric_name}_ratio"] == metric["ratio"], where
            if metric["target"] is not None:
                assert isinstance(metric["meets_target"], bool), where
    pipeline = doc["scenarios"]["pipeline"]["metrics"]
    assert pipeline["turns_per_s_1"]["target"] == 5000
    assert pipeline["overhead_p99_ms_1"]["target"] == 2
    # the table on stdout has one row per metric plus the header; RESULTS.md has the same table
    rows = [line for line in stdout.splitlines() if line.startswith("| ")]
    total = sum(len(r["metrics"]) for r in doc["scenarios"].values())
    assert len(rows) == total + 1
    assert report.markdown(doc) in report.results_markdown(doc)
    # the run names the SDK versions both sides ran on
    assert doc["host"]["sdks"]["litellm"] != "not installed"
    assert f"python-telegram-bot {doc['host']['sdks']['python-telegram-bot']}" in (
        report.results_markdown(doc)
    )
    # and the event loop the daemons ran on (gateway.event_loop auto: uvloop, installed here)
    assert doc["host"]["event_loop"] == "uvloop"
    assert "chatgate's event loop: uvloop" in report.results_markdown(doc)


def test_every_scenario_runs_including_the_tls_and_chat_platform_ones() -> None:
    assert set(EXECUTION_ORDER) == set(SCENARIOS)
    assert {"telegram_tls_dms", "telegram_tls_slow_model", "discord", "slack", "whatsapp"} <= set(
        SCENARIOS
    )
    assert {"uploads", "media", "matrix"} <= set(SCENARIOS)


async def test_media_rig_messages_reach_ptb_as_a_photo_and_a_voice_note_with_their_files() -> None:
    """What both sides of the media scenario get: PTB sees a photo (largest size last) and a voice
    note of 60 s, and each file downloads byte for byte from the fake."""
    from bench.scenarios.media import VOICE_S, Sender

    sender = Sender(b"\xff\xd8photo", b"OggS voice")
    async with FakeTelegram() as fake:
        sender.send(fake, 10)
        sender.send(fake, 11)
        base_file_url = fake.base_url.removesuffix("/bot") + "/file/bot"
        async with Bot(TOKEN, base_url=fake.base_url, base_file_url=base_file_url) as bot:
            photo, voice = [u.message for u in await bot.get_updates(timeout=0)]
            assert photo is not None and voice is not None
            got_photo = await (await photo.photo[-1].get_file()).download_as_bytearray()
            assert voice.voice is not None and voice.to_dict()["voice"]["duration"] == VOICE_S
            got_voice = await (await voice.voice.get_file()).download_as_bytearray()
    assert (bytes(got_photo), bytes(got_voice)) == (sender.photo, sender.voice)


@pytest.mark.slow
async def test_slack_floor_answers_a_socket_mode_dm_and_acks_after_replying(
    tmp_path: Path,
) -> None:
    async with FakeSlack() as fake:
        floor = Proc("bolt-floor", floor_argv(fake, "echo", None), tmp_path / "floor.log")
        async with started(floor):
            await fake.wait_connected(timeout=60)
            envelope = await fake.push_event(dm_event(fake, 7, "hello floor"))
            [post] = await fake.wait_calls("chat.postMessage", timeout=30)
            ack = await fake.wait_acked(envelope.envelope_id, timeout=30)
    assert post.params["channel"] == "D7" and post.params["text"] == "hello floor"
    assert "thread_ts" not in post.params  # a DM is answered in the DM
    assert ack.at >= post.at  # process_before_response: the listener ran before the ack


@pytest.mark.slow
async def test_slack_burst_sends_each_user_its_share_of_the_dms(tmp_path: Path) -> None:
    """users × per_user DMs come from ``users`` senders (per-user caches and sessions are
    measured as such), each answered."""
    from bench.scenarios.slackrig import SlackRig, Subject, burst

    async with FakeSlack() as fake:
        floor = Proc("bolt-floor", floor_argv(fake, "echo", None), tmp_path / "floor.log")
        async with started(floor):
            await fake.wait_connected(timeout=60)
            subject = Subject("floor", fake, floor)
            rig = SlackRig("echo", subject, subject, None, quiet_s=0.1)
            result = await burst(rig, subject, users=3, per_user=2, tag="t", within_s=30)
        dms = sorted(str(c.params["channel"]) for c in fake.calls("chat.postMessage"))
    assert result.missing == 0
    assert dms == ["D100000", "D100000", "D100001", "D100001", "D100002", "D100002"]


async def test_tls_rig_ptb_trusts_the_throwaway_ca_via_ssl_cert_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tls = loopback_tls(tmp_path)
    async with FakeTelegram(ssl_context=tls.server_context) as fake:
        assert fake.base_url.startswith("https://127.0.0.1:")
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        with pytest.raises(NetworkError, match="CERTIFICATE_VERIFY_FAILED"):
            async with Bot(TOKEN, base_url=fake.base_url):  # getMe on entry
                pass
        for name, value in tls.client_env().items():
            monkeypatch.setenv(name, value)  # read when PTB builds its httpx client
        async with Bot(TOKEN, base_url=fake.base_url) as bot:
            await bot.send_message(chat_id=42, text="over TLS")
    assert [c.params["text"] for c in fake.calls_of("sendMessage")] == ["over TLS"]


@pytest.mark.slow
async def test_whatsapp_floor_marks_read_and_answers_a_signed_post(tmp_path: Path) -> None:
    from bench.procs import AnnouncedProc
    from bench.scenarios.whatsapp import WEBHOOK
    from bench.scenarios.whatsapp import floor_argv as wa_floor_argv
    from tests.fakes.whatsapp import FakeWhatsApp

    async with FakeWhatsApp() as fake:
        floor = AnnouncedProc("wa-floor", wa_floor_argv(fake, "echo", None), tmp_path / "f.log")
        async with started(floor):
            url = f"http://127.0.0.1:{floor.port}{WEBHOOK}"
            forged = await fake.post(url, fake.message("15550001", text="x"), secret="wrong")
            status, _ = await fake.post(url, fake.message("15550001", text="hello floor"))
            [sent] = await fake.wait_sent(1, timeout=30)
    assert forged[0] == 401 and status == 200
    assert sent["text"]["body"] == "hello floor" and "context" in sent
    assert len(fake.reads()) == 1


def test_pipeline_side_pauses_for_its_driver_and_times_on_the_process_clock(
    tmp_path: Path,
) -> None:
    """`python -m bench.scenarios.pipeline --pause` (what `bench.instructions pipeline` runs under
    callgrind) stops after its warm-up and after its load until told to go on."""
    argv = [sys.executable, "-m", "bench.scenarios.pipeline", "--side", "floor", "--turns", "20"]
    argv += ["--workdir", str(tmp_path), "--clock", "process", "--pause"]
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=cli_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for _ in range(2):
            assert proc.stdout.readline().strip() == "at"
            proc.stdin.write("go\n")
            proc.stdin.flush()
        last = proc.stdout.readline()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert last.startswith("turns ") and "per CPU-second; latency p50" in last
