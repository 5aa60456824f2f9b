"""Redis mode: a turn waits for approval on one replica and the press arrives at another; the
turn resumes once, where it waits, and a second press changes nothing."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.approvals.feature import Approvals
from chatgate.gateway.app import Gateway
from chatgate.policies.approvals import press_value
from chatgate.state.approvals import KV_NAME, ApprovalStore
from chatgate.state.redis.approvals import RedisApprovals
from chatgate.state.redis.client import Keys
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.harness import fake_agent, memory, running, write_config
from tests.redis.replicas_support import redis_lines
from tests.support.waiting import eventually
from tests.tools.approval_store_contract import check_contract

pytestmark = pytest.mark.redis
SEND = ToolCalls.of(ToolCall("gateway__send_message", {"target": "ops", "text": "roll back"}))


@contextlib.asynccontextmanager
async def replica(directory: Path, url: str, name: str, llm: FakeLLM) -> AsyncIterator[Gateway]:
    path = write_config(
        directory,
        f"""{redis_lines(url, name, 2)}
{fake_agent(llm, "sk-test", 30)}
    tools:
      allow: [gateway.send_message]
      send_to: {{ops: "memory:ops-room"}}
      approval: {{"gateway.*": ask}}
channels:
  memory: {{dm_policy: open}}
""",
    )
    async with running(path) as gateway:
        yield gateway


async def test_a_press_at_the_other_replica_resumes_the_waiting_turn_once(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(SEND, "Rolled back.")
    async with (
        replica(tmp_path / "a", redis_db, "a", fake_llm) as a,
        replica(tmp_path / "b", redis_db, "b", fake_llm) as b,
    ):
        submission = await memory(a).inject("roll back the deploy", message_id="m1")
        [prompt] = await memory(a).wait_sent(1, timeout=30)
        assert "gateway.send_message" in prompt.text
        store = b.rt.state.stores.kv[KV_NAME]
        assert isinstance(store, ApprovalStore)
        [pending] = await store.pending_in("memory", "c1", b.rt.clock.time())

        press = await memory(b).inject(
            "Approve", message_id="press-1", choice=press_value(True, pending.id)
        )
        assert (await press.result).reason == "approved"
        result = await submission.result  # the turn on replica a went on
        again = await memory(a).inject(
            "Deny", message_id="press-2", choice=press_value(False, pending.id)
        )
        assert (await again.result).reason == "approval_already_decided"
        replayed = await memory(b).inject(
            "Approve", message_id="press-1", choice=press_value(True, pending.id)
        )
        assert replayed.duplicate
        entry = await b.rt.journal.get("memory:m1")

    assert result.reply == "Rolled back."
    assert len(fake_llm.requests) == 2, "the turn ran more than once"
    sent_a, sent_b = memory(a).texts(), memory(b).texts()
    assert (sent_a + sent_b).count("roll back") == 1  # the tool ran once
    assert (sent_a + sent_b).count("Rolled back.") == 1
    assert "✅ gateway.send_message: approved by Alice." in sent_b  # where it was decided
    assert entry is not None and entry.reply is not None
    [call] = entry.reply["tools"]["trail"]
    assert (call["approval"], call["approver"]) == ("approved", "memory:u1")


async def test_redis_approvals_keep_the_contract(redis_db: str) -> None:
    client = Redis.from_url(redis_db, decode_responses=True)
    try:
        keys = Keys("cg:")
        await check_contract(RedisApprovals(client, keys), RedisApprovals(client, keys))
    finally:
        await client.aclose()


async def test_a_replica_that_leaves_while_waiting_hands_the_prompt_to_another(
    tmp_path: Path, redis_db: str, fake_llm: FakeLLM
) -> None:
    fake_llm.script(SEND)
    async with replica(tmp_path / "b", redis_db, "b", fake_llm) as b:
        async with replica(tmp_path / "a", redis_db, "a", fake_llm) as a:
            await memory(a).inject("roll back the deploy", message_id="m1")
            await memory(a).wait_sent(1, timeout=30)
            store = b.rt.state.stores.kv[KV_NAME]
            assert isinstance(store, ApprovalStore)
            [pending] = await store.pending_in("memory", "c1", b.rt.clock.time())
            fake_llm.script(SEND, "Rolled back.")  # b's run of the turn asks for the same call
        await fake_llm.wait_for_requests(2, timeout=30)  # b adopted the turn and asked again
        await eventually(lambda: b.feature(Approvals).desk.waiting == 1, what="b waiting")
        press = await memory(b).inject(
            "Approve", message_id="press-1", choice=press_value(True, pending.id)
        )
        assert (await press.result).reason == "approved"
        await memory(b).wait_sent(3, timeout=30)
        entry = await b.rt.journal.get("memory:m1")
    texts = memory(b).texts()
    assert not any("wants to use" in t for t in texts), "b asked a second time"
    assert texts.count("roll back") == 1 and "Rolled back." in texts
    assert len(fake_llm.requests) == 3
    assert entry is not None and entry.delivery == "sent"
