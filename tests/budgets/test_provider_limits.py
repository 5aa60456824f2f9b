"""The provider's limits: `max_concurrent` caps an agent's calls in flight, and a quota error
(insufficient_quota) parks the provider with the fix while users get the failure reply."""

from __future__ import annotations

import asyncio
from pathlib import Path

from chatgate.gateway.supervision.degraded import OwnerKind
from tests.fakes.llm import FakeLLM, Fault, _error_body
from tests.harness import fake_agent, memory, running, write_config


def _config(tmp_path: Path, llm: FakeLLM, extra: str = "") -> Path:
    return write_config(
        tmp_path,
        f"""  rate_limits: {{per_sender: null, per_chat: null}}
{fake_agent(llm, "sk-test", 30)}
{extra}channels:
  memory: {{dm_policy: open}}
""",
    )


async def test_max_concurrent_caps_calls_in_flight(tmp_path: Path) -> None:
    async with FakeLLM(latency_s=0.1) as fake:
        config = _config(tmp_path, fake, "    max_concurrent: 2\n")
        async with running(config) as gw:
            chat = memory(gw)
            submissions = [await chat.inject(f"q{i}", chat_id=f"c{i}") for i in range(6)]
            results = await asyncio.gather(*(s.result for s in submissions))
        assert [r.reason for r in results] == ["text"] * 6
        assert fake.stats()["max_in_flight"] == 2


async def test_insufficient_quota_parks_the_provider(tmp_path: Path, fake_llm: FakeLLM) -> None:
    quota = Fault(
        429,
        _error_body(
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            "insufficient_quota",
        ),
    )
    fake_llm.fail_next(quota)
    async with running(_config(tmp_path, fake_llm)) as gw:
        chat = memory(gw)
        result = await (await chat.inject("hello")).result
        await chat.wait_sent(1)
        owners = gw.rt.degraded.owners()
    assert result.reason == "provider_quota"
    assert len(fake_llm.requests) == 1  # a quota error is not waited out
    [owner] = [o for o in owners if o.kind is OwnerKind.PROVIDER]
    assert "insufficient_quota" in owner.reason and "top up" in owner.hint
    assert "gateway.yaml" not in chat.texts()[0]
