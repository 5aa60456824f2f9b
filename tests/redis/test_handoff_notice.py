"""An answer handed off by a live replica is claimed by the channel's holder at once (a notice,
not the adoption poll of half a lease TTL), and the log does not call that replica dead."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.model.messages import InboundMessage, Target
from chatgate.model.outbound import OutboundMessage, message_to_dict
from chatgate.state.records import JournalMark, JournalState
from chatgate.state.redis.client import Keys
from chatgate.state.redis.journal import RedisJournal
from tests.harness import memory, running, write_config
from tests.redis.replicas_support import redis_lines

pytestmark = pytest.mark.redis
TTL_S = 20.0  # the adoption poll runs every 10 s: a claim within a few seconds is the notice


async def test_a_handed_over_answer_is_sent_at_once_and_logged_as_a_enqueue(
    tmp_path: Path, redis_db: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_config(
        tmp_path,
        redis_lines(redis_db, "b", TTL_S)
        + "agents:\n  default: {backend: echo}\nchannels:\n  memory: {dm_policy: open}\n",
    )
    client = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with running(path) as b:
            caplog.set_level(logging.INFO, logger="chatgate")
            a = RedisJournal(client, Keys("chatgate:"), "a")  # a live peer, as the other replica
            await client.set("chatgate:replica:a", "1", ex=60)
            msg = InboundMessage(
                channel="memory", platform="memory", chat_id="c1", chat_kind="direct",
                sender_id="u1", message_id="h1", text="hi", received_at=time.time(),
                reply_target=Target("memory", "c1"),
            )  # fmt: skip
            await a.record(msg, time.time(), 3600)
            reply = {"message": message_to_dict(OutboundMessage.from_text("handed answer"))}
            session = "default:memory:c1"
            await a.settle(
                msg.key,
                JournalMark(JournalState.ANSWERED, time.time(), session=session, reply=reply),
            )
            started = time.monotonic()
            assert await a.hand_off(msg.key)
            await memory(b).wait_sent(1, timeout=TTL_S)
            took = time.monotonic() - started
    finally:
        await client.aclose()
    assert memory(b).texts() == ["handed answer"]
    assert took < TTL_S / 4, f"claimed after {took:.1f} s: by the poll, not the notice"
    said = [r.getMessage() for r in caplog.records]
    assert "sent answers another replica handed off" in said
    assert "adopted a dead replica's unfinished messages" not in said
