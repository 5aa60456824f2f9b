"""Two audiences end to end: chat users read a plain failure text; the operator chat gets the
detail once per reason per window (gateway.operator_notify)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.llm import FakeLLM, Fault
from tests.harness import memory, running, write_config

API_KEY = "sk-notify-secret-key"


def _config(tmp_path: Path, fake: FakeLLM) -> Path:
    return write_config(
        tmp_path,
        f"""  operator_notify: "memory:ops"
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: {API_KEY}
    timeout_s: 5
channels:
  memory: {{dm_policy: open}}
""",
    )


async def test_failures_reach_the_operator_chat_once_per_reason(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.fail_next(Fault.context_overflow(), times=2)
    async with running(_config(tmp_path, fake_llm)) as gw:
        chat = memory(gw)
        for user in ("u1", "u2"):
            result = await (await chat.inject("a very long story", chat_id=user)).result
            assert result.reason == "context_overflow"
        await chat.wait_sent(3)  # two users' replies and one operator notice
        fake_llm.fail_next(Fault.model_not_found())
        await (await chat.inject("and now?", chat_id="u3")).result
        await chat.wait_sent(5)
    for user in ("u1", "u2", "u3"):
        [said] = chat.texts(user)
        assert "gateway.yaml" not in said and "chatgate" not in said
    notices = chat.texts("ops")
    assert len(notices) == 2  # context_overflow once (rate-limited), then model_not_found
    assert "context_overflow" in notices[0] and "memory:u1" in notices[0]
    assert "model_not_found" in notices[1] and "`model` in gateway.yaml" in notices[1]
    assert all(API_KEY not in n for n in notices)
