"""`make soak`: the long kill -9 loop (default 30 kills, at most ~15 minutes); prints the figures.

Run: ``python -m tests.reliability.soak [KILLS]``. Exit 1 when a message was lost or duplicated
or the model was asked again for a message already answered.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from tests.daemon import kill_leftovers
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.reliability.killloop import kill_loop


async def soak(kills: int) -> int:
    with tempfile.TemporaryDirectory(prefix="chatgate-soak-") as tmp:
        async with FakeTelegram() as tg, FakeLLM() as llm:
            try:
                figures = await kill_loop(
                    Path(tmp), tg, llm, kills=kills, period_s=0.25, drain_timeout_s=240
                )
            finally:
                kill_leftovers()
    print(figures.summary())
    if figures.lost:
        print("lost:", ", ".join(figures.lost))
    if figures.duplicated:
        print("duplicated:", figures.duplicated)
    if figures.reruns_after_answer:
        print("re-run after an answer:", ", ".join(figures.reruns_after_answer))
    bad = figures.lost or figures.duplicated or figures.reruns_after_answer
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(soak(int(sys.argv[1]) if len(sys.argv) > 1 else 30)))
