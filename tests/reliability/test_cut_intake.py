"""An adapter that stops (its lease lost, its poller rebuilt) cancels the intake it is awaiting.
Wherever that cut lands (before, during or after the journal write, in any stage), the message
the platform delivers again is answered exactly once: a journaled message goes on without the
adapter, one that was not is taken as new."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from chatgate.gateway.app import Gateway
from chatgate.model.results import Submission
from tests.fakes.llm import FakeLLM
from tests.harness import memory, running
from tests.redis.test_gateway_redis import config

CUT_POINTS = range(0, 48)  # event-loop ticks the intake runs before its adapter cancels it


async def cut_after(gw: Gateway, text: str, message_id: str, ticks: int) -> None:
    task: asyncio.Future[Submission] = asyncio.ensure_future(
        memory(gw).inject(text, message_id=message_id)
    )
    for _ in range(ticks):
        await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def answered_once_wherever_cut(gw: Gateway, fake_llm: FakeLLM) -> None:
    chat = memory(gw)
    for ticks in CUT_POINTS:
        await cut_after(gw, f"q{ticks}", f"m{ticks}", ticks)
        again = await chat.inject(f"q{ticks}", message_id=f"m{ticks}")  # delivered again
        result = await asyncio.wait_for(again.result, 30)
        assert result.reply == f"echo: q{ticks}", f"cut after {ticks} ticks: {result}"
    await chat.wait_sent(len(CUT_POINTS), timeout=30)
    await asyncio.sleep(0.2)  # a second answer would be on its way now
    sent = Counter(chat.texts())
    assert sent == Counter(f"echo: q{t}" for t in CUT_POINTS), sent
    asked = Counter(r.last_user_text for r in fake_llm.requests)
    assert max(asked.values()) == 1, f"a cut message ran twice: {asked}"


async def test_an_intake_cut_anywhere_answers_the_message_once(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with running(config(tmp_path, fake_llm, "")) as gw:
        await answered_once_wherever_cut(gw, fake_llm)
