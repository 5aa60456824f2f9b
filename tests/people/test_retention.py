"""`retention:` on both backends: transcript lines and journal content older than a channel's
days go (journal entries stay as content-free tombstones, so dedupe still works), in bounded
steps; younger ones and other channels' stay; each pass that purged something is audited."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatgate.clock import SystemClock
from chatgate.config.errors import ConfigError
from chatgate.config.loader import LoadedConfig
from chatgate.model.chat import ChatMessage
from chatgate.model.messages import InboundMessage
from chatgate.people.retention import purge_once
from chatgate.state.factory import State, build_state
from chatgate.state.records import JournalMark, JournalState
from tests.fakes.clock import ManualClock
from tests.harness import load, write_config
from tests.redis.replicas_support import redis_lines

DAY = 86_400.0
T0 = 1_700_000_000.0


@dataclass
class Live:
    loaded: LoadedConfig


def config(tmp_path: Path, redis_url: str | None) -> LoadedConfig:
    store = redis_lines(redis_url, "retention", 2) if redis_url else ""
    return load(
        write_config(
            tmp_path,
            f"""{store}retention:
  channels: {{memory: 2}}
  batch: 3
channels:
  memory: {{dm_policy: open}}
""",
        )
    )


@pytest.fixture
async def stored(mode: str | None, tmp_path: Path) -> AsyncIterator[tuple[State, LoadedConfig]]:
    loaded = config(tmp_path, mode)
    state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
    await state.open()
    try:
        yield state, loaded
    finally:
        await state.close()


async def said(state: State, channel: str, mid: str, text: str, at: float) -> str:
    msg = InboundMessage(channel, "memory", "c1", "direct", "u1", mid, text, received_at=at)
    await state.journal.record(msg, at, 10 * DAY)
    await state.journal.settle(
        msg.key,
        JournalMark(
            JournalState.DONE, at, stage="turn", reason="text", session=f"default:{channel}:c1"
        ),
    )
    line = ChatMessage("user", text, "u1", msg.key)
    await state.sessions.append(f"default:{channel}:c1", 0, [line], at)
    return msg.key


async def test_old_lines_and_entries_go_in_bounded_steps(
    stored: tuple[State, LoadedConfig],
) -> None:
    state, loaded = stored
    old = [await said(state, "memory", f"o{i}", f"old {i}", T0 + i) for i in range(4)]
    young = await said(state, "memory", "y1", "young", T0 + 3 * DAY)
    other = await said(state, "other", "x1", "other channel", T0)
    personal = state.stores.personal
    assert personal is not None
    assert await personal.expire("memory", T0 + 2 * DAY, 3) == 3  # a bounded step
    clock = ManualClock(wall_start=T0 + 4 * DAY)  # two days back: only the young one is kept
    assert (await purge_once(personal, Live(loaded), clock))["memory"] > 0

    [info] = [s for s in await state.sessions.recent() if s.key == "default:memory:c1"]
    assert info.message_count == 1
    transcript = await state.sessions.transcript("default:memory:c1")
    assert [line.content for line in transcript or []] == ["young"]
    for key in old:
        entry = await state.journal.get(key)
        assert entry is not None and entry.message.text == "" and entry.message.sender_id == ""
        assert entry.reason == "erased"
    kept = await state.journal.get(young)
    assert kept is not None and kept.message.text == "young"
    elsewhere = await state.journal.get(other)
    assert elsewhere is not None and elsewhere.message.text == "other channel"
    assert [line.content for line in await state.sessions.transcript("default:other:c1") or []] == [
        "other channel"
    ]
    # the tombstone still deduplicates a redelivery
    again = InboundMessage("memory", "memory", "c1", "direct", "u1", "o0", "old 0", received_at=T0)
    new, _ = await state.journal.record(again, T0 + 4 * DAY, 10 * DAY)
    assert not new
    [audited] = await personal.audit_log(5)
    assert (audited.action, audited.person, audited.by) == ("retention", "memory:*", "retention")
    assert await purge_once(personal, Live(loaded), clock) == {}  # nothing left to purge


def test_a_retention_for_an_unknown_channel_is_a_config_error(tmp_path: Path) -> None:
    path = write_config(
        tmp_path, "retention:\n  channels: {telegarm: 7}\nchannels:\n  memory: {}\n"
    )
    with pytest.raises(ConfigError, match=r"retention\.channels\.telegarm: channel 'telegarm' is"):
        load(path)
