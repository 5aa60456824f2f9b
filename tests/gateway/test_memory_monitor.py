"""Memory monitor: /proc + cgroup reading, eviction enactment, shedding and the run loop."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatgate.gateway.process.memory_monitor import (
    DrivenMemorySource,
    MemoryMonitor,
    MemoryStatus,
    ProcMemorySource,
)
from chatgate.gateway.session_cache import SessionCache
from chatgate.model.chat import ChatMessage
from chatgate.policies.memory import MemorySample, WarmSessionFacts
from chatgate.state.sqlite.db import Database
from chatgate.state.sqlite.sessions import SqliteSessionStore

MIB = 1024 * 1024
STATUS = "Name:\tpython\nVmRSS:\t    2048 kB\nRssAnon:\t     512 kB\nRssFile:\t 1536 kB\n"


class ManualClock:
    """Time stands still; sleep() parks until the test calls wake()."""

    def __init__(self) -> None:
        self.now = 1_000.0
        self.sleeps: list[float] = []
        self._parked = asyncio.Event()
        self._wake = asyncio.Event()

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self._parked.set()
        await self._wake.wait()
        self._wake.clear()

    async def parked(self) -> None:
        await asyncio.wait_for(self._parked.wait(), 2)
        self._parked.clear()

    def wake(self) -> None:
        self._wake.set()


class DictCache:
    """A test double of SessionCache: warm-session facts in a dict; evicting frees memory."""

    def __init__(
        self, sessions: list[WarmSessionFacts], source: DrivenMemorySource, frees: int
    ) -> None:
        self.sessions = {s.key: s for s in sessions}
        self.source = source
        self.frees = frees
        self.evicted: list[str] = []

    def facts(self) -> list[WarmSessionFacts]:
        return list(self.sessions.values())

    def evict(self, key: str) -> bool:
        s = self.sessions.get(key)
        if s is None or s.in_flight or not s.flushed:
            return False
        del self.sessions[key]
        self.evicted.append(key)
        self.source.rss_bytes -= self.frees
        return True


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def proc_source(
    tmp_path: Path, limit_mb: int | None = None, cgroup: str = "0::/\n"
) -> ProcMemorySource:
    return ProcMemorySource(
        limit_mb,
        proc_status=write(tmp_path / "status", STATUS),
        cgroup_root=tmp_path / "cg",
        proc_cgroup=write(tmp_path / "cgroup", cgroup),
    )


def physical_ram() -> int:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


# --- ProcMemorySource ---------------------------------------------------------------------------


def test_v2_number_and_rss_anon(tmp_path: Path) -> None:
    write(tmp_path / "cg" / "memory.max", "536870912\n")
    assert proc_source(tmp_path).sample() == MemorySample(512 * 1024, 512 * MIB)


def test_v2_max_means_unlimited_and_v1_is_not_consulted(tmp_path: Path) -> None:
    write(tmp_path / "cg" / "memory.max", "max\n")
    write(tmp_path / "cg" / "memory" / "memory.limit_in_bytes", "1048576\n")
    assert proc_source(tmp_path).sample().limit_bytes is None


def test_v1_number(tmp_path: Path) -> None:
    write(tmp_path / "cg" / "memory" / "memory.limit_in_bytes", "268435456\n")
    assert proc_source(tmp_path, cgroup="4:memory:/\n0::/\n").sample().limit_bytes == 256 * MIB


@pytest.mark.parametrize("value", [str(9223372036854771712), str(2**60)])
def test_v1_huge_value_is_unlimited(tmp_path: Path, value: str) -> None:
    write(tmp_path / "cg" / "memory" / "memory.limit_in_bytes", value + "\n")
    assert proc_source(tmp_path).sample().limit_bytes is None


def test_v1_larger_than_physical_ram_is_unlimited(tmp_path: Path) -> None:
    over = physical_ram() + 4096 * 1024
    assert over < 2**60
    write(tmp_path / "cg" / "memory" / "memory.limit_in_bytes", f"{over}\n")
    assert proc_source(tmp_path).sample().limit_bytes is None


def test_config_limit_wins_over_cgroup(tmp_path: Path) -> None:
    write(tmp_path / "cg" / "memory.max", "536870912\n")
    assert proc_source(tmp_path, limit_mb=100).sample().limit_bytes == 100 * MIB


def test_missing_files_never_raise(tmp_path: Path) -> None:
    source = ProcMemorySource(
        proc_status=tmp_path / "nope",
        cgroup_root=tmp_path / "nope-cg",
        proc_cgroup=tmp_path / "nope-cgroup",
    )
    assert source.sample() == MemorySample(0, None)


def test_garbage_files_never_raise(tmp_path: Path) -> None:
    write(tmp_path / "cg" / "memory.max", "\xff\xfe junk\n")
    source = ProcMemorySource(
        proc_status=write(tmp_path / "status", "RssAnon: lots kB\nVmRSS:\n"),
        cgroup_root=tmp_path / "cg",
        proc_cgroup=write(tmp_path / "cgroup", "garbage\n"),
    )
    assert source.sample() == MemorySample(0, None)


def test_vmrss_fallback_when_rss_anon_absent(tmp_path: Path) -> None:
    status = write(tmp_path / "status", "Name:\tpython\nVmRSS:\t    2048 kB\n")
    source = ProcMemorySource(
        proc_status=status, cgroup_root=tmp_path / "cg", proc_cgroup=tmp_path / "none"
    )
    assert source.sample().rss_bytes == 2048 * 1024


def test_nested_cgroup_takes_tightest_limit_and_is_reread(tmp_path: Path) -> None:
    own = tmp_path / "cg" / "system.slice" / "chatgate.service" / "memory.max"
    write(own, "max\n")
    write(tmp_path / "cg" / "system.slice" / "memory.max", "1073741824\n")
    source = proc_source(tmp_path, cgroup="0::/system.slice/chatgate.service\n")
    assert source.sample().limit_bytes == 1024 * MIB
    own.write_text("104857600\n")  # e.g. `systemctl set-property chatgate MemoryMax=100M`
    assert source.sample().limit_bytes == 100 * MIB


def test_real_proc_is_readable() -> None:
    sample = ProcMemorySource().sample()
    assert sample.rss_bytes > 0


# --- MemoryMonitor ------------------------------------------------------------------------------


def monitor(
    source: DrivenMemorySource,
    cache: DictCache | SessionCache,
    clock: ManualClock | None = None,
    *,
    on_evict: Callable[[str], None] | None = None,
    on_sample: Callable[[MemoryStatus], None] | None = None,
) -> MemoryMonitor:
    return MemoryMonitor(
        source,
        cache,
        clock or ManualClock(),
        shed_ratio=0.95,
        headroom_ratio=0.85,
        interval_s=5.0,
        on_evict=on_evict,
        on_sample=on_sample,
    )


def settle(mon: MemoryMonitor) -> MemoryStatus:
    """Run passes until one evicts nothing more (each pass evicts at most half the candidates)."""
    status = mon.check()
    for _ in range(50):
        before = status.evictions
        status = mon.check()
        if status.evictions == before:
            break
    return status


def test_evicts_coldest_first_skipping_busy_and_stops_within_headroom() -> None:
    source = DrivenMemorySource(rss_bytes=960, limit_bytes=1000)
    cache = DictCache(
        [
            WarmSessionFacts("warm", 50.0),
            WarmSessionFacts("busy", 1.0, in_flight=True),
            WarmSessionFacts("dirty", 2.0, flushed=False),
            WarmSessionFacts("cold", 10.0),
            WarmSessionFacts("tepid", 20.0),
            WarmSessionFacts("hot", 90.0),
        ],
        source,
        frees=50,
    )
    seen: list[str] = []
    status = settle(monitor(source, cache, on_evict=seen.append))
    assert cache.evicted == ["cold", "tepid", "warm"]  # 960 → 910 → 860 → 810
    assert seen == cache.evicted
    assert set(cache.sessions) == {"busy", "dirty", "hot"}
    assert status == MemoryStatus(810, 1000, 0.81, False, 3, 1_000.0)


def test_within_headroom_evicts_nothing() -> None:
    source = DrivenMemorySource(rss_bytes=850, limit_bytes=1000)
    cache = DictCache([WarmSessionFacts("a", 1.0)], source, frees=50)
    assert monitor(source, cache).check().evictions == 0
    assert cache.evicted == []


def test_shedding_toggles_at_shed_ratio_and_clears_when_rss_drops() -> None:
    source = DrivenMemorySource(rss_bytes=940, limit_bytes=1000)
    mon = monitor(source, DictCache([], source, frees=0))
    assert not mon.check().shedding and not mon.shedding
    source.rss_bytes = 950
    assert mon.check().shedding and mon.shedding
    source.rss_bytes = 949
    assert not mon.check().shedding and not mon.shedding


def test_evictions_that_free_enough_clear_shedding_in_the_same_pass() -> None:
    source = DrivenMemorySource(rss_bytes=990, limit_bytes=1000)
    cache = DictCache([WarmSessionFacts(k, i) for i, k in enumerate("abcd")], source, frees=100)
    status = settle(monitor(source, cache))
    assert cache.evicted == ["a", "b"]
    assert not status.shedding


def test_everything_busy_keeps_shedding() -> None:
    source = DrivenMemorySource(rss_bytes=990, limit_bytes=1000)
    cache = DictCache([WarmSessionFacts("a", 1.0, in_flight=True)], source, frees=100)
    status = settle(monitor(source, cache))
    assert cache.evicted == [] and status.shedding


def test_unknown_limit_never_sheds_or_evicts() -> None:
    source = DrivenMemorySource(rss_bytes=10**12, limit_bytes=None)
    cache = DictCache([WarmSessionFacts("a", 1.0)], source, frees=1)
    status = settle(monitor(source, cache))
    assert cache.evicted == []
    assert (status.shedding, status.ratio, status.limit_bytes) == (False, None, None)


def test_failing_hooks_do_not_stop_eviction() -> None:
    def boom(_: object) -> None:
        raise RuntimeError("hook")

    source = DrivenMemorySource(rss_bytes=900, limit_bytes=1000)
    cache = DictCache([WarmSessionFacts("a", 1.0), WarmSessionFacts("b", 2.0)], source, frees=30)
    status = settle(monitor(source, cache, on_evict=boom, on_sample=boom))
    assert cache.evicted == ["a", "b"] and status.evictions == 2


def test_update_applies_new_thresholds_and_rejects_nonsense() -> None:
    source = DrivenMemorySource(rss_bytes=700, limit_bytes=1000)
    cache = DictCache([WarmSessionFacts("a", 1.0)], source, frees=100)
    mon = monitor(source, cache)
    assert not mon.check().shedding
    mon.update(shed_ratio=0.7, headroom_ratio=0.65, interval_s=1.0)
    status = mon.check()
    assert cache.evicted == ["a"] and not status.shedding and mon.interval_s == 1.0
    with pytest.raises(ValueError):
        mon.update(shed_ratio=0.7, headroom_ratio=0.65, interval_s=0)
    with pytest.raises(ValueError):
        mon.update(shed_ratio=1.5, headroom_ratio=0.65, interval_s=1)


@given(
    st.lists(st.tuples(st.floats(0, 100), st.booleans(), st.booleans()), min_size=0, max_size=12),
    st.integers(0, 200),
    st.integers(1, 120),
)
def test_eviction_invariants(
    rows: list[tuple[float, bool, bool]], start_over: int, frees: int
) -> None:
    source = DrivenMemorySource(rss_bytes=850 + start_over, limit_bytes=1000)
    facts = [
        WarmSessionFacts(f"k{i}", t, busy, flushed) for i, (t, busy, flushed) in enumerate(rows)
    ]
    cache = DictCache(facts, source, frees=frees)
    status = settle(monitor(source, cache))
    by_key = {f.key: f for f in facts}
    evicted = [by_key[k] for k in cache.evicted]
    assert all(not f.in_flight and f.flushed for f in evicted)
    assert [f.last_activity for f in evicted] == sorted(f.last_activity for f in evicted)
    idle_left = [f for f in cache.sessions.values() if not f.in_flight and f.flushed]
    if idle_left:  # stopped early only because memory got back within headroom
        assert source.rss_bytes <= 850
        assert all(f.last_activity >= e.last_activity for f in idle_left for e in evicted)
    if cache.evicted:  # and not one eviction more than needed
        assert source.rss_bytes + frees > 850
    assert status.evictions == len(cache.evicted)


@pytest.fixture
async def session_cache(tmp_path: Path) -> AsyncIterator[SessionCache]:
    db = Database(tmp_path / "state.db")
    await db.open()
    yield SessionCache(SqliteSessionStore(db), max_warm=50, max_messages=20)
    await db.close()


async def test_real_session_cache(session_cache: SessionCache) -> None:
    cache = session_cache
    for t, key in enumerate(["busy", "dirty", "cold", "tepid", "warm", "hot"]):
        session = await cache.acquire(key, float(t))
        if key == "dirty":
            session.unflushed.append(ChatMessage("user", "not persisted yet"))
        if key != "busy":
            cache.release(session)
    source = DrivenMemorySource(rss_bytes=960, limit_bytes=1000)

    def freed(_: str) -> None:
        source.rss_bytes -= 50

    status = settle(monitor(source, cache, on_evict=freed))
    assert status.evictions == 3 and cache.evictions == 3
    assert {f.key for f in cache.facts()} == {"busy", "dirty", "hot"}
    assert cache.get("cold") is None and cache.get("busy") is not None


# --- run() --------------------------------------------------------------------------------------


class FlakySource(DrivenMemorySource):
    """Raises on the first sample (e.g. a broken custom source), then reports normally."""

    def __init__(self) -> None:
        super().__init__(rss_bytes=100, limit_bytes=1000)
        self.calls = 0

    def sample(self) -> MemorySample:
        self.calls += 1
        if self.calls == 1:
            raise OSError("transient")
        return super().sample()


async def test_run_loop_samples_each_interval_and_survives_errors() -> None:
    clock = ManualClock()
    source = FlakySource()
    statuses: list[MemoryStatus] = []
    mon = monitor(source, DictCache([], source, frees=0), clock, on_sample=statuses.append)
    task = asyncio.create_task(mon.run())
    try:
        await clock.parked()  # first pass raised, loop kept going
        assert statuses == [] and clock.sleeps == [5.0]
        clock.now = 1_005.0
        clock.wake()
        await clock.parked()
        assert [s.last_sample_at for s in statuses] == [1_005.0]
        source.rss_bytes = 990
        mon.update(shed_ratio=0.95, headroom_ratio=0.85, interval_s=2.0)
        clock.wake()
        await clock.parked()
        assert mon.shedding and statuses[-1].rss_bytes == 990
        assert clock.sleeps == [5.0, 5.0, 2.0]
        assert not task.done()
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


def test_one_pass_evicts_at_most_half_when_rss_does_not_fall() -> None:
    source = DrivenMemorySource(rss_bytes=990, limit_bytes=1000)
    facts = [WarmSessionFacts(f"s{i}", float(i)) for i in range(10)]
    cache = DictCache(facts, source, frees=0)  # freed memory is reused, RSS stays put
    mon = monitor(source, cache)
    mon.check()
    assert cache.evicted == ["s0", "s1", "s2", "s3", "s4"]  # coldest half, not the whole cache
    mon.check()
    assert cache.evicted[5:] == ["s5", "s6"]  # the next pass re-measures and continues
