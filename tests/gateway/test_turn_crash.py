"""A turn that raises something no step expects fails visibly and frees its delivery id."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chatgate.channels.signatures import sign
from chatgate.model.reasons import FailureReason
from tests.channels.discord.support import python_agent
from tests.harness import http, running, url, write_config

SECRET = "s3cret-crash-route"
# An answer whose kept data is no JSON (a set in its meta): the write of the answer raises.
AGENT = """
from chatgate.agents.base import AgentReply

def agent(turn):
    return AgentReply(text="an answer", meta={"seen": {1, 2}})
"""


async def test_an_unwritable_answer_fails_the_turn_and_a_resend_is_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = python_agent(tmp_path, monkeypatch, "surrogate_agent", AGENT)
    config = write_config(
        tmp_path,
        f"""
agents:
{agents}
channels:
  webhook:
    routes:
      r:
        path: /hooks/r
        secret: {SECRET}
        signature: generic
        agent: scripted
        prompt: "hi"
        session: "fixed"
""",
    )
    body = b"{}"
    answers = []
    async with running(config) as gw, http() as client:
        for _ in range(2):
            headers = {"Content-Type": "application/json", "X-Delivery-Id": "d-1"}
            headers.update(sign("generic", SECRET, body, time.time()))
            async with client.post(url(gw, "/hooks/r"), data=body, headers=headers) as resp:
                answers.append((resp.status, await resp.json()))
        [entry] = [e for e in await gw.rt.journal.unfinished()] or [None]
    (first_status, first), (again_status, again) = answers
    assert (first_status, again_status) == (200, 200)  # the resend is answered, not left waiting
    assert first["reason_code"] == again["reason_code"] == FailureReason.UNKNOWN.value
    assert "Something went wrong" in first["reply"]  # the failure reply, visible to the caller
    assert entry is None  # nothing left pending for good
