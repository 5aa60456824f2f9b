"""A direct chat's transcript outlives the journal (purged after the dedupe window): the person's
whole sessions are still found by their chats (the one named like the user, the one pairing
recorded) and erased, on both backends; someone else's session stays."""

from __future__ import annotations

from pathlib import Path

from chatgate.clock import SystemClock
from chatgate.model.chat import ChatMessage
from chatgate.people.desk import PrivacyDesk
from chatgate.state.factory import build_state
from chatgate.state.personal import Person
from tests.harness import load, write_config
from tests.redis.replicas_support import redis_lines


async def test_sessions_without_journal_entries_are_found(tmp_path: Path, mode: str | None) -> None:
    store = redis_lines(mode, "forgotten", 2) if mode else ""
    loaded = load(write_config(tmp_path, f"{store}channels:\n  webhook: {{routes: {{}}}}\n"))
    state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
    await state.open()
    try:
        now = SystemClock().time()
        issued = await state.pairing.request("slack", "U1", "Ann", "D77", now)
        assert issued.code is not None
        await state.pairing.approve("slack", issued.code, now)
        for session, text in (
            ("a:slack:D77", "in the paired DM"),
            ("a:slack:U1", "named like the user"),
            ("a:slack:C5:uU1", "per user in a group"),
            ("a:slack:C5", "the shared group"),
            ("a:slack:D88", "someone else's DM"),
        ):
            await state.sessions.append(session, 0, [ChatMessage("user", text)], now)
        desk = PrivacyDesk(state, SystemClock())
        footprint, _ = await desk.erase(Person("slack", "U1"), "test")
        assert footprint.own_sessions == {"a:slack:D77", "a:slack:U1", "a:slack:C5:uU1"}
        for gone in footprint.own_sessions:
            assert not await state.sessions.transcript(gone)
        for kept in ("a:slack:C5", "a:slack:D88"):
            assert len(await state.sessions.transcript(kept) or []) == 1
    finally:
        await state.close()
