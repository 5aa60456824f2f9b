"""Memory pressure: shedding with a visible busy reply, and coldest-first eviction of warm sessions."""

from __future__ import annotations

from pathlib import Path

from chatgate.gateway.app import Gateway
from chatgate.policies.memory import MemorySample
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import memory, running, sql, write_config

MB = 1024 * 1024


class CacheSizedSource:
    """RSS that grows with the number of warm sessions, so evicting one really frees memory."""

    def __init__(self, base: int, per_session: int, limit: int) -> None:
        self.base, self.per_session, self.limit = base, per_session, limit
        self.gateway: Gateway | None = None

    def sample(self) -> MemorySample:
        warm = len(self.gateway.rt.cache) if self.gateway is not None else 0
        return MemorySample(self.base + self.per_session * warm, self.limit)

    def apply_limit_mb(self, limit_mb: int | None) -> None:
        return None


def config(tmp_path: Path, fake: FakeLLM) -> Path:
    return write_config(
        tmp_path,
        f"""  memory: {{shed_ratio: 0.95, headroom_ratio: 0.85, interval_s: 3600}}
  rate_limits: {{per_sender: null, per_chat: null}}
agents:
  default: {{backend: litellm, model: openai/fake-model, api_base: "{fake.base_url}", api_key: sk-x}}
channels:
  memory: {{dm_policy: open}}
""",
    )


async def test_eviction_is_coldest_first_skips_busy_and_unflushed_and_rebuilds_identically(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    clock = ManualClock()
    source = CacheSizedSource(base=700 * MB, per_session=50 * MB, limit=1000 * MB)
    async with running(config(tmp_path, fake_llm), clock=clock, memory_source=source) as gw:
        source.gateway = gw
        chat = memory(gw)
        for name in ("cold", "unflushed", "warm", "busy", "hot"):
            await (await chat.inject(f"hello from {name}", chat_id=name, sender_id=name)).result
            clock.advance(10)
        key = {
            name: f"default:memory:{name}" for name in ("cold", "unflushed", "warm", "busy", "hot")
        }

        await sql(
            gw,
            "CREATE TRIGGER fail_unflushed BEFORE INSERT ON messages "
            f"WHEN NEW.session_key = '{key['unflushed']}' BEGIN SELECT RAISE(ABORT, 'disk error'); END",
        )
        await (
            await chat.inject("second message", chat_id="unflushed", sender_id="unflushed")
        ).result
        fake_llm.fail_next(Fault.hang())
        busy = await chat.inject("slow question", chat_id="busy", sender_id="busy")
        await fake_llm.wait_for_requests(7)
        transcript_before = list(gw.rt.cache.get(key["warm"]).transcript)  # type: ignore[union-attr]

        # 700 + 5×50 = 950 MB of 1000: above headroom (85 %), below shedding (95 %).
        status = gw.memory.check()  # evicts at most half of the candidates per pass
        assert not status.shedding
        assert gw.rt.cache.evictions == 1 and gw.rt.cache.get(key["cold"]) is None
        gw.memory.check()  # the next pass re-measures and continues
        remaining = {name for name, k in key.items() if gw.rt.cache.get(k) is not None}
        # Two evictions bring it to 850 MB (85 %): the two coldest evictable ones, never busy/unflushed.
        assert remaining == {"unflushed", "busy", "hot"}
        assert gw.rt.cache.evictions == 2

        fake_llm.release()
        await busy.result
        await (await chat.inject("still there?", chat_id="warm", sender_id="warm")).result
    rebuilt = fake_llm.requests[-1].messages
    assert [m["content"] for m in rebuilt[:-1]] == [m.content for m in transcript_before]
    assert rebuilt[-1]["content"] == "still there?"


async def test_above_shed_ratio_new_turns_get_a_busy_reply_and_nothing_is_lost(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    source = CacheSizedSource(base=500 * MB, per_session=0, limit=1000 * MB)
    async with running(config(tmp_path, fake_llm), memory_source=source) as gw:
        source.gateway = gw
        chat = memory(gw)
        await (await chat.inject("before pressure", chat_id="a", sender_id="a")).result
        source.base = 960 * MB
        status = gw.memory.check()
        assert status.shedding
        shed = await (await chat.inject("during pressure", chat_id="a", sender_id="a")).result
        await chat.wait_sent(2)
        source.base = 500 * MB
        assert not gw.memory.check().shedding
        after = await (await chat.inject("after pressure", chat_id="a", sender_id="a")).result
        journal = await gw.rt.journal.get(shed.key)
        metrics = gw.metrics.render().decode()
    assert (shed.stage, shed.reason) == ("memory", "memory_pressure")
    assert "busy" in chat.texts()[1]
    assert after.reason == "text"
    assert journal is not None and journal.reason == "memory_pressure"  # recorded, with its reason
    assert [r.last_user_text for r in fake_llm.requests] == ["before pressure", "after pressure"]
    assert (
        'chatgate_dropped_total{channel="memory",reason="memory_pressure",stage="memory"} 1.0'
        in metrics
    )
