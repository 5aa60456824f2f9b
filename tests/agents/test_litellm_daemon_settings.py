"""The litellm agent's daemon configuration: no logging callbacks, one bounded shared client."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator

import pytest

from chatgate.agents.litellm_import import (
    DAEMON_SETTINGS,
    MODEL_CONNECTIONS_PER_HOST,
    POOL_ENV,
    import_litellm,
)
from tests.agents.helpers import Recorder, make_turn
from tests.agents.test_litellm_agent import ECHOED, close_agents, litellm_agent
from tests.daemon import ROOT, cli_env
from tests.fakes.llm import FakeLLM, Fault

CALLBACK_LISTS = (
    "callbacks",
    "input_callback",
    "success_callback",
    "failure_callback",
    "service_callback",
    "_async_input_callback",
    "_async_success_callback",
    "_async_failure_callback",
)
PROBE_TIMEOUT_S = 180.0  # a fresh process imports litellm: seconds, a minute on a busy machine


@pytest.fixture(autouse=True)
async def _agents_closed() -> AsyncIterator[None]:
    """Each test's agents closed after it: left open, their client sessions outlive the test's
    loop and are only collected at the worker's exit ("Unclosed client session")."""
    yield
    await close_agents()


async def test_no_logging_callbacks_and_daemon_settings_after_turns(fake: FakeLLM) -> None:
    agent = litellm_agent(fake.base_url, stream=True, fallbacks=["openai/backup-model"])
    fake.fail_model("fake-model", Fault.unavailable(), times=1)

    await agent.run(make_turn(recorder=Recorder()))  # falls back, streams
    await agent.run(make_turn())

    litellm = import_litellm()
    registered = {name: list(getattr(litellm, name)) for name in CALLBACK_LISTS}
    assert registered == {name: [] for name in CALLBACK_LISTS}
    assert {name: getattr(litellm, name) for name in DAEMON_SETTINGS} == DAEMON_SETTINGS
    assert litellm.turn_off_message_logging is not True  # its redaction costs CPU per call


async def test_one_client_is_reused_across_turns_and_models(fake: FakeLLM) -> None:
    agent = litellm_agent(fake.base_url, fallbacks=["openai/backup-model"])
    fake.fail_model("fake-model", Fault.unavailable(), times=1)

    replies = [await agent.run(make_turn()) for _ in range(5)]

    assert [r.text for r in replies] == [ECHOED] * 5
    assert [r.model for r in fake.requests] == ["fake-model", "backup-model", *["fake-model"] * 4]
    # keep-alive on one pooled connection: no connection per turn
    assert len({r.peer for r in fake.requests}) == 1


def test_pool_bound_defaults_are_set_before_litellm_reads_them() -> None:
    import_litellm()

    assert POOL_ENV["AIOHTTP_CONNECTOR_LIMIT_PER_HOST"] == str(MODEL_CONNECTIONS_PER_HOST)
    for name, value in POOL_ENV.items():
        assert os.environ[name] == value  # setdefault: an operator's own value would win


@pytest.mark.slow
async def test_pool_bound_holds_while_200_calls_run() -> None:
    """In a fresh process (litellm reads the bound at import) with a bound of 100, 200 concurrent
    turns reach the model over at most 100 connections, and every turn gets its answer."""
    calls, bound = 200, 100
    async with FakeLLM(latency_s=3.0) as fake:  # long enough for a full pool to be in flight
        env = cli_env({"AIOHTTP_CONNECTOR_LIMIT_PER_HOST": str(bound), "PYTHONPATH": str(ROOT)})
        env.pop("AIOHTTP_CONNECTOR_LIMIT", None)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.agents.pool_probe",
            fake.base_url,
            str(calls),
            cwd=ROOT,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), PROBE_TIMEOUT_S)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert proc.returncode == 0, err.decode()[-2000:]
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["answered"] == calls
    assert result["limit_per_host"] == bound
    assert result["limit"] == int(POOL_ENV["AIOHTTP_CONNECTOR_LIMIT"])  # the agent's default
    assert len(fake.requests) == calls
    assert fake.max_in_flight == bound  # reached, never exceeded
    assert len({r.peer for r in fake.requests}) <= bound  # connections were reused
