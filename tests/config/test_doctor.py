"""`chatgate doctor`: real getMe and a one-token completion against the fakes, fixes, no secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.cli.doctor_cmd import Finding, Level, diagnose, exit_code, render
from chatgate.cli.main import main
from chatgate.config.errors import EX_CONFIG
from tests.channels.telegram.support import api_base
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.harness import write_config

API_KEY = "sk-doctor-SECRET-4242"
HOOK_SECRET = "whsec-doctor-SECRET-77"


def config(
    tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, *, token: str = TOKEN, agent: str = ""
) -> Path:
    return write_config(
        tmp_path,
        f"""
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {llm.base_url}
    api_key: {API_KEY}
{agent}
channels:
  telegram:
    token: "{token}"
    api_base: {api_base(tg)}
  webhook:
    routes:
      signed: {{path: /hooks/signed, secret: {HOOK_SECRET}}}
      empty: {{path: /hooks/empty, secret: ""}}
""",
    )


def by_check(findings: list[Finding]) -> dict[str, Finding]:
    return {f.check: f for f in findings}


def assert_no_secrets(findings: list[Finding]) -> None:
    text = render(findings)
    for secret in (TOKEN, API_KEY, HOOK_SECRET):
        assert secret not in text


async def test_healthy_deployment_is_all_ok_with_one_real_call_each(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    findings = await diagnose(config(tmp_path, fake_tg, fake_llm), fix=True)

    checks = by_check(findings)
    assert checks["telegram.token"].level is Level.OK
    assert "@chatgate_test_bot" in checks["telegram.token"].detail
    assert checks["agent.default.key"].level is Level.OK
    assert checks["state.dir"].level is Level.OK  # created by --fix
    assert checks["webhook.signed.secret"].level is Level.OK
    assert checks["webhook.empty.secret"].level is Level.WARN  # answers 503 until a secret is set
    assert exit_code(findings) == 0
    assert len(fake_tg.calls_of("getMe")) == 1
    [probe] = fake_llm.requests
    assert probe.body["max_tokens"] == 1
    assert_no_secrets(findings)


async def test_rejected_token_and_key_fail_with_the_fix(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.fail_next(Fault.unauthorized())
    path = config(tmp_path, fake_tg, fake_llm, token="999:revoked-SECRET-token")

    findings = await diagnose(path)

    checks = by_check(findings)
    assert checks["telegram.token"].level is Level.FAIL
    assert "BotFather" in (checks["telegram.token"].fix or "")
    assert checks["agent.default.key"].level is Level.FAIL
    assert "auth_permanent" in checks["agent.default.key"].detail
    assert "agents.default.api_key" in (checks["agent.default.key"].fix or "")
    assert exit_code(findings) == 2
    assert "999:revoked-SECRET-token" not in render(findings)
    assert_no_secrets(findings)


async def test_every_fallback_model_is_probed_on_its_own(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.fail_model("missing-model", Fault.model_not_found("missing-model"))
    agent = f"""\
  spare:
    backend: litellm
    model: openai/fake-model
    api_base: {fake_llm.base_url}
    api_key: {API_KEY}
    fallbacks: [openai/missing-model]
"""
    findings = await diagnose(config(tmp_path, fake_tg, fake_llm, agent=agent))

    spare = [f for f in findings if f.check.startswith("agent.spare.")]
    assert [f.level for f in spare] == [Level.OK, Level.FAIL]
    assert [f.check for f in spare] == ["agent.spare.key", "agent.spare.fallbacks.0.key"]
    assert "model_not_found" in spare[1].detail
    assert "agents.spare.model" in (spare[1].fix or "")


async def test_offline_makes_no_network_calls(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    findings = await diagnose(config(tmp_path, fake_tg, fake_llm), offline=True)

    checks = by_check(findings)
    assert checks["telegram.token"].level is checks["agent.default.key"].level is Level.SKIP
    assert fake_tg.calls == [] and fake_llm.requests == []


async def test_invalid_config_names_key_and_line_and_stops_there(tmp_path: Path) -> None:
    path = write_config(tmp_path, "channels:\n  telegram:\n    group_policy: mentions\n")

    findings = await diagnose(path)

    [_, problem, *rest] = findings
    assert {f.check.split(".")[0] for f in rest} == {"supply"}  # the config-free checks only
    assert problem.level is Level.FAIL
    assert "channels.telegram.group_policy" in problem.detail
    assert "gateway.yaml:" in problem.detail
    assert exit_code(findings) == EX_CONFIG


async def test_fix_migrates_an_old_config_and_keeps_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(
        f"gateway: {{state_dir: {tmp_path / 'state'}}}\n"
        "agents: {default: {backend: echo}}\n"
        "channels:\n  telegram:\n    enabled: false\n    allowed_users: '1, 2'\n"
    )

    before = await diagnose(path, offline=True)
    after = await diagnose(path, fix=True, offline=True)

    assert before[0].level is Level.WARN and "chatgate config migrate" in (before[0].fix or "")
    assert after[0].level is Level.OK and "migrated" in after[0].detail
    assert (tmp_path / "gateway.yaml.bak").exists()
    assert "allowed_users:\n    - '1'\n    - '2'" in path.read_text()
    assert exit_code(after) == 0


async def test_unwritable_state_dir_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    path = tmp_path / "gateway.yaml"
    path.write_text(
        f"config_version: 1\ngateway: {{state_dir: {blocker / 'state'}}}\n"
        "agents: {default: {backend: echo}}\n"
    )

    findings = await diagnose(path, fix=True, offline=True)

    state = by_check(findings)["state.dir"]
    assert state.level is Level.FAIL and "gateway.state_dir" in (state.fix or "")
    assert exit_code(findings) == 2


def test_cli_prints_findings_and_exits_by_the_worst(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(
        f"config_version: 1\ngateway: {{state_dir: {tmp_path / 'state'}}}\n"
        "agents: {default: {backend: echo}}\n"
    )

    code = main(["doctor", "--config", str(path), "--offline"])

    out = capsys.readouterr().out
    assert code == 0
    assert "ok    config.load" in out and "agent.default.backend" in out
    assert main(["doctor", "--config", str(tmp_path / "missing.yaml")]) == EX_CONFIG


async def test_offline_still_finds_a_missing_model_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = tmp_path / "gateway.yaml"
    path.write_text(
        f"config_version: 1\ngateway: {{state_dir: {tmp_path / 'state'}}}\n"
        "agents: {default: {backend: litellm, model: openai/gpt-4o-mini}}\n"
    )

    findings = await diagnose(path, offline=True)

    agent = by_check(findings)["agent.default.key"]
    assert agent.level is Level.FAIL and "missing_key" in agent.detail
    assert "agents.default.api_key" in (agent.fix or "")
