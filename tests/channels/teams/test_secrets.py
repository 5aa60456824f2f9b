"""The Teams app password and the bot's access tokens never appear in chatgate's output: a
debug-level daemon driven through a good message, a forged post, a revoked token (the channel
parks), then logs, `status --json`, `config show`, `doctor` and the state files are scanned."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.channels.teams.support import PATH, teams_config
from tests.daemon import ROOT, Daemon, run_cli
from tests.fakes.llm import FakeLLM
from tests.fakes.teams import FakeTeams
from tests.harness import over_http

pytestmark = pytest.mark.slow
CANARY = "CANARY-teams-app-password-5c2e8f"
API_TOKEN = "Tq8vN2kLp4Rt7Wx1Yc5Bm9Hd3Gf6Js0A"


async def test_the_app_password_and_bot_tokens_stay_hidden(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    ms.password = CANARY
    config = teams_config(tmp_path, ms, over_http(fake_llm), password="${TEAMS_APP_PASSWORD}")
    debug = "  api_token: ${CHATGATE_API_TOKEN}\n  log: {level: debug, format: json}\n"
    text = config.read_text().replace("  drain_timeout_s: 5\n", "  drain_timeout_s: 5\n" + debug)
    config.write_text(text)
    env = {"PYTHONPATH": str(ROOT), "TEAMS_APP_PASSWORD": CANARY, "CHATGATE_API_TOKEN": API_TOKEN}
    outputs: list[str] = []
    daemon = await Daemon(config, env=env).start()
    try:
        url = daemon.base + PATH
        outputs.append(repr(await ms.post(url, ms.message("hello", activity_id="1"))))
        await ms.wait_sent(1, timeout=60)
        outputs.append(repr(await ms.post(url, ms.message("x"), token=ms.token(forged=True))))
        ms.revoke_tokens()  # the next send is refused: the channel parks
        outputs.append(repr(await ms.post(url, ms.message("after", activity_id="2"))))
        for args in (["status", "--json"], ["config", "show"], ["dlq", "list", "--json"]):
            _, out, err = await run_cli(*args, "--config", str(config), env=env)
            outputs += [out, err]
        _, out, err = await run_cli("doctor", "--config", str(config), env=env)
        outputs += [out, err]
    finally:
        await daemon.terminate()
    outputs.append(daemon.logs())
    everything = "\n".join(outputs)
    tokens = [r["access_token"] for r in ms.token_answers]
    assert "unauthorized" in everything and tokens
    for secret in (CANARY, *tokens):
        assert secret not in everything and secret.lower() not in everything.lower(), secret
    for file in (tmp_path / "state").rglob("*"):
        if file.is_file():
            data = file.read_bytes().decode("utf-8", errors="replace")
            assert CANARY not in data and not any(t in data for t in tokens), file
