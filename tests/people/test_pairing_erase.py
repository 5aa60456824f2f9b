"""An approval still waiting to be announced is the person's too: after an erase it is neither
kept nor announced, on either backend; another person's announcement stays queued."""

from __future__ import annotations

from pathlib import Path

from chatgate.clock import SystemClock
from chatgate.people.desk import PrivacyDesk
from chatgate.state.factory import build_state
from chatgate.state.personal import Person
from tests.harness import load, write_config
from tests.redis.replicas_support import redis_lines


async def test_an_unannounced_approval_goes_with_the_person(
    tmp_path: Path, mode: str | None
) -> None:
    store = redis_lines(mode, "pairing", 2) if mode else ""
    loaded = load(write_config(tmp_path, f"{store}channels:\n  webhook: {{routes: {{}}}}\n"))
    state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
    await state.open()
    try:
        now = SystemClock().time()
        for who in ("ann", "bob"):
            issued = await state.pairing.request("telegram", who, f"{who} name", who, now)
            assert issued.code is not None
            await state.pairing.approve("telegram", issued.code, now)
        desk = PrivacyDesk(state, SystemClock())
        shown = await desk.show(Person("telegram", "ann"), "test")
        assert sum(f.count for f in shown.found if f.store.startswith("pairing")) >= 1
        await desk.erase(Person("telegram", "ann"), "test")
        assert [a.sender_id for a in await state.pairing.take_unnotified()] == ["bob"]
        assert [a.sender_id for a in await state.pairing.approved("telegram")] == ["bob"]
    finally:
        await state.close()
