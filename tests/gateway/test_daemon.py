"""The real daemon in a subprocess: crash recovery, shipped config, signals, CLI, secret hygiene."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import time
from pathlib import Path

import aiohttp
import pytest

from chatgate.channels.signatures import sign
from tests.daemon import ROOT, Daemon, jobs_route, post_signed_job, run_cli
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import OverHttp, fake_agent, over_http, write_config

pytestmark = pytest.mark.slow

SECRET = "whsec-daemon-secret-0123456789"
API_KEY = "sk-daemon-api-key-abcdef123456"
API_TOKEN = "tok-6f1d2c9a8b7e4f30a1b2c3d4e5f60718"


def daemon_config(
    tmp_path: Path, fake: FakeLLM | OverHttp, *, timeout_s: float = 30, extra_gateway: str = ""
) -> Path:
    return write_config(
        tmp_path,
        f"""  api_token: {API_TOKEN}
{extra_gateway}
{fake_agent(fake, API_KEY, timeout_s)}
{jobs_route(SECRET)}""",
    )


async def post_job(
    base: str, text: str, delivery: str, user: str = "ada"
) -> tuple[int, dict[str, str]]:
    return await post_signed_job(base, SECRET, text, delivery, user)


async def test_kill9_between_journal_and_reply_is_answered_exactly_once(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    config = daemon_config(tmp_path, over_http(fake_llm))
    fake_llm.script(Fault.hang())
    first = await Daemon(config).start()
    pending = asyncio.create_task(post_job(first.base, "summarise the report", "job-1"))
    await fake_llm.wait_for_requests(1, timeout=20)  # journaled, agent call in flight, no reply yet
    first.kill9()
    await first.wait()
    with pytest.raises(aiohttp.ClientError):
        await pending
    fake_llm.release()
    fake_llm.default_reply = lambda r: f"summary of: {r.last_user_text}"

    second = await Daemon(config, log_name="daemon2.log").start()
    try:
        await fake_llm.wait_for_requests(2, timeout=20)  # resumed from the journal on start
        status, data = await post_job(
            second.base, "summarise the report", "job-1"
        )  # the caller retries
        assert status == 200
        assert data["reply"] == "summary of: summarise the report"
        assert len(fake_llm.requests) == 2
    finally:
        assert await second.terminate() == 0
    with sqlite3.connect(tmp_path / "state" / "chatgate.db") as db:
        rows = db.execute("SELECT state, reason FROM inbound").fetchall()
        transcript = db.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
    assert rows == [("done", "text")]
    assert transcript == [
        ("user", "summarise the report"),
        ("assistant", "summary of: summarise the report"),
    ]


async def test_sigterm_finishes_the_running_turn_then_exits_zero(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 1.0
    daemon = await Daemon(daemon_config(tmp_path, fake_llm)).start()
    pending = asyncio.create_task(post_job(daemon.base, "slow one", "job-2"))
    await fake_llm.wait_for_requests(1, timeout=20)
    daemon.proc.send_signal(15)  # type: ignore[union-attr]
    status, data = await pending
    assert await daemon.wait() == 0
    assert status == 200 and data["reply"] == "echo: slow one"


async def test_shipped_config_starts_without_secrets(tmp_path: Path) -> None:
    config = tmp_path / "gateway.yaml"
    shutil.copy(ROOT / "gateway.yaml", config)
    env = {"CHATGATE_PORT": "0", "CHATGATE_STATE_DIR": str(tmp_path / "state")}
    daemon = await Daemon(config, env=env).start()
    try:
        assert (await daemon.get("/healthz"))[0] == 200
        assert (await daemon.get("/readyz"))[0] == 200
        code, text = await daemon.get("/api/status")
        status = json.loads(text)
        [webhook] = [c for c in status["channels"] if c["name"] == "webhook"]
        assert webhook["state"] == "running"
        assert webhook["routes"]["example"]["configured"] is False
        code, out, err = await run_cli(
            "status", "--config", str(config), env=env | {"CHATGATE_PORT": str(daemon.port)}
        )
        assert code == 0, err
        assert "not configured: secret empty" in out
    finally:
        assert await daemon.terminate() == 0


async def test_turn_without_model_key_answers_missing_key(tmp_path: Path) -> None:
    config = tmp_path / "gateway.yaml"
    shutil.copy(ROOT / "gateway.yaml", config)
    env = {
        "CHATGATE_PORT": "0",
        "CHATGATE_STATE_DIR": str(tmp_path / "state"),
        "WEBHOOK_SECRET": SECRET,
    }
    daemon = await Daemon(config, env=env).start()
    try:
        body = b'{"text": "hello"}'
        headers = {"Content-Type": "application/json", **sign("generic", SECRET, body, time.time())}
        async with (
            aiohttp.ClientSession() as s,
            s.post(f"{daemon.base}/hooks/example", data=body, headers=headers) as r,
        ):
            data = await r.json()
        assert r.status == 200
        assert data["reason_code"] == "missing_key"
        assert "api_key" in data["reply"]
    finally:
        await daemon.terminate()


async def test_status_when_daemon_is_not_running_says_so(tmp_path: Path, fake_llm: FakeLLM) -> None:
    config = daemon_config(tmp_path, fake_llm)
    config.write_text(config.read_text().replace("port: 0", "port: 9"))
    code, _, err = await run_cli("status", "--config", str(config))
    assert code == 69
    assert "chatgate is not running" in err and "127.0.0.1:9" in err


async def test_api_requires_the_bearer_token_and_status_cli_uses_it(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    config = daemon_config(tmp_path, over_http(fake_llm))
    daemon = await Daemon(config).start()
    try:
        assert (await daemon.get("/api/status"))[0] == 401
        code, _ = await daemon.get("/api/status", headers={"Authorization": f"Bearer {API_TOKEN}"})
        assert code == 200
        config_port = config.read_text().replace("port: 0", f"port: {daemon.port}")
        config.write_text(config_port)
        code, out, err = await run_cli("status", "--json", "--config", str(config))
        assert code == 0, err
        data = json.loads(out)
        assert data["ready"] is True and data["channels"][0]["name"] == "webhook"
        assert data["event_loop"]["implementation"] == "uvloop"  # auto, and uvloop is installed
    finally:
        await daemon.terminate()


async def test_event_loop_asyncio_runs_the_daemon_on_the_standard_loop(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("standard loop reply")
    config = daemon_config(tmp_path, fake_llm, extra_gateway="  event_loop: asyncio")
    daemon = await Daemon(config).start()
    try:
        status, data = await post_job(daemon.base, "hello", "job-loop")
        assert status == 200 and data["reply"] == "standard loop reply", data
        auth = {"Authorization": f"Bearer {API_TOKEN}"}
        code, body = await daemon.get("/api/status", headers=auth)
        assert code == 200 and json.loads(body)["event_loop"]["implementation"] == "asyncio"
    finally:
        await daemon.terminate()


async def test_secrets_never_reach_logs_status_or_errors(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Fault.unauthorized(), Fault.server_error())
    config = daemon_config(tmp_path, fake_llm, timeout_s=2)
    config.write_text(config.read_text().replace("  log:", "  log:") + "\n")
    daemon = await Daemon(config).start()
    outputs = []
    try:
        for i in range(3):
            outputs.append(json.dumps(await post_job(daemon.base, f"job {i}", f"s-{i}")))
        body = b'{"text": "x"}'
        async with (
            aiohttp.ClientSession() as s,
            s.post(
                f"{daemon.base}/hooks/jobs",
                data=body,
                headers={"X-Signature-256": "sha256=" + "1" * 64},
            ) as r,
        ):
            outputs.append(await r.text())
        outputs.append(
            (await daemon.get("/api/status", headers={"Authorization": f"Bearer {API_TOKEN}"}))[1]
        )
        outputs.append((await daemon.get("/metrics"))[1])
        _, out, err = await run_cli("config", "show", "--config", str(config))
        outputs.extend([out, err])
    finally:
        await daemon.terminate()
    outputs.append(daemon.logs())
    everything = "\n".join(outputs)
    assert "invalid signature" in everything and "auth_permanent" in everything
    for secret in (SECRET, API_KEY, API_TOKEN):
        assert secret not in everything
        assert secret[:-4] not in everything
