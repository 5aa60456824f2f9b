"""openai/ models through the openai SDK: which calls take that route, that it needs no litellm,
and that it answers as litellm does (the agent tests in test_litellm_agent run on both)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from chatgate.agents.openai_route import speaks_openai
from tests.agents.helpers import Recorder, make_turn
from tests.agents.test_litellm_agent import litellm_agent
from tests.daemon import ROOT, cli_env
from tests.fakes.llm import FakeLLM

PROBE_TIMEOUT_S = 120.0


@pytest.mark.parametrize(
    ("model", "client", "expected"),
    [
        ("openai/gpt-4o-mini", "auto", True),
        ("openai/meta-llama/Llama-3.1-8B", "auto", True),  # a self-hosted server's name
        ("openai/gpt-4o-mini", "litellm", False),  # the operator forces litellm
        ("openai/o3-mini", "auto", False),  # litellm rewrites max_tokens for reasoning models
        ("openai/gpt-5", "auto", False),
        ("anthropic/claude-3-5-haiku", "auto", False),
        ("gpt-4o-mini", "auto", False),  # no provider: litellm infers it from the name
    ],
)
def test_which_calls_take_the_sdk_route(model: str, client: str, expected: bool) -> None:
    assert speaks_openai(model, client) is expected


async def _probe(base: str, client: str, *fallbacks: str) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.agents.route_probe",
        base,
        client,
        *fallbacks,
        cwd=ROOT,
        env=cli_env({"PYTHONPATH": str(ROOT)}),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), PROBE_TIMEOUT_S)
    assert proc.returncode == 0, err.decode()[-2000:]
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


async def test_an_openai_model_answers_without_litellm(fake: FakeLLM) -> None:
    assert (await _probe(fake.base_url, "auto"))["text"] == "echo: ping"
    needed = await _probe(fake.base_url, "litellm")
    assert needed == {"prewarm": "ModuleNotFoundError", "error": "unknown"}  # litellm is needed
    assert len(fake.requests) == 1


async def test_the_warm_up_imports_litellm_only_for_a_model_that_takes_it(fake: FakeLLM) -> None:
    """An agent whose models all take the openai route warms the SDK alone; a fallback through
    litellm has it imported at the warm-up, not in the middle of a failing turn."""
    assert (await _probe(fake.base_url, "auto"))["prewarm"] == "ok"
    assert (await _probe(fake.base_url, "auto", "openai/backup"))["prewarm"] == "ok"
    fallback = await _probe(fake.base_url, "auto", "anthropic/claude-3-5-haiku-latest")
    assert fallback["prewarm"] == "ModuleNotFoundError" and fallback["text"] == "echo: ping"


@pytest.mark.parametrize("stream", [False, True])
async def test_both_clients_send_and_answer_alike(fake: FakeLLM, stream: bool) -> None:
    settings = {"stream": stream, "max_tokens": 64, "temperature": 0.2, "system_prompt": "Be kind."}
    replies, deltas = [], []
    for client in ("auto", "litellm"):
        recorder = Recorder()
        agent = litellm_agent(fake.base_url, client=client, **settings)
        replies.append(await agent.run(make_turn(recorder=recorder)))
        deltas.append(recorder.deltas)
        await agent.aclose()

    via_sdk, via_litellm = replies
    assert (via_sdk.text, via_sdk.model, via_sdk.usage) == (
        via_litellm.text,
        via_litellm.model,
        via_litellm.usage,
    )
    assert via_sdk.usage["total_tokens"] > 0
    assert deltas[0] == deltas[1] and bool(deltas[0]) is stream
    sdk_body, litellm_body = (r.body for r in fake.requests)
    assert sdk_body == litellm_body
    assert sdk_body["max_tokens"] == 64 and sdk_body["temperature"] == 0.2
