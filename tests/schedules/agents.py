"""A python agent for daemon tests: writes each prompt to a ledger file; the first call hangs
when a `hang` file sits next to the ledger (a run caught mid-turn by kill -9)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from chatgate.agents.base import Turn


async def ledger(turn: Turn) -> str:
    path = Path(os.environ["SCHEDULE_TEST_LEDGER"])
    first = not path.exists()
    with path.open("a", encoding="utf-8") as out:
        out.write(turn.text + "\n")
    if first and (path.parent / "hang").exists():
        await asyncio.sleep(3600)
    return f"re: {turn.text}"
