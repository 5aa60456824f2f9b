"""debounce_ms: a user's quick messages become one turn (each still journaled), timed by an
injected clock; a message after the window is a turn of its own."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.harness import memory, running, write_config
from tests.support.waiting import eventually


def _config(tmp_path: Path, fake: FakeLLM) -> Path:
    return write_config(
        tmp_path,
        f"""
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: sk-burst-test
    timeout_s: 5
channels:
  memory: {{dm_policy: open, debounce_ms: 800}}
""",
    )


async def test_a_burst_is_one_turn_and_a_later_message_another(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.default_reply = lambda r: f"{len(r.messages)} messages"
    clock = ManualClock()
    async with running(_config(tmp_path, fake_llm), clock=clock) as gw:
        chat = memory(gw)
        burst = [await chat.inject(t) for t in ("hi", "I have a question", "about billing")]
        await eventually(lambda: bool(clock.pending()), what="the burst wait")
        assert fake_llm.requests == []  # still inside the window
        clock.advance(0.5)
        late = await chat.inject("and refunds?")  # restarts the window: joins the burst
        clock.advance(0.5)
        assert fake_llm.requests == []
        clock.advance(0.4)
        results = [await s.result for s in [*burst, late]]
        await chat.wait_sent(1)
        clock.advance(5.0)
        after = await chat.inject("thanks")
        await eventually(lambda: bool(clock.pending()), what="the next burst wait")
        clock.advance(1.0)
        await after.result
        entries = await gw.rt.journal.find("memory", sender_id="u1", limit=10)
    assert [r.reason for r in results] == ["text"] * 4
    assert len(fake_llm.requests) == 2  # the burst, then "thanks"
    users = [m["content"] for m in fake_llm.requests[0].messages if m["role"] == "user"]
    assert users == ["hi", "I have a question", "about billing", "and refunds?"]
    assert len(entries) == 5  # the journal still records every message
    assert chat.texts()[0].endswith("messages")
