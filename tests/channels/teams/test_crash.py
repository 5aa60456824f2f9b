"""kill -9 after Teams got its 200, and a clean restart: every message is answered exactly
once by the next daemon, a late redelivery too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.channels.teams.support import PATH as MESSAGES
from tests.channels.teams.support import teams_config
from tests.daemon import ROOT, Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.teams import FakeTeams
from tests.harness import over_http

ENV = {"PYTHONPATH": str(ROOT)}


@pytest.mark.slow
async def test_kill9_after_the_200_answers_each_message_exactly_once_after_restart(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    config = teams_config(tmp_path, ms, over_http(fake_llm))
    fake_llm.latency_s = 60
    first = await Daemon(config, env=ENV).start()
    chats = [f"a:1chat-{n}" for n in range(3)]
    posts = [
        ms.message(f"question {n}", conversation=c, user=f"aad-{n}", activity_id=f"90{n}")
        for n, c in enumerate(chats)
    ]
    for post in posts:
        assert (await ms.post(first.base + MESSAGES, post))[0] == 200  # acked: never resent
    await fake_llm.wait_for_requests(len(posts), timeout=60)  # turns running
    first.kill9()
    await first.wait()
    fake_llm.latency_s = 0
    assert ms.messages() == []
    second = await Daemon(config, env=ENV, log_name="daemon2.log").start()
    try:
        await ms.wait_sent(len(posts), timeout=60)
        # a late redelivery of a message answered across the crash is still one answer
        assert (await ms.post(second.base + MESSAGES, posts[0]))[0] == 200
    finally:
        assert await second.terminate() == 0
    third = await Daemon(config, env=ENV, log_name="daemon3.log").start()
    try:
        assert (await ms.post(third.base + MESSAGES, posts[1]))[0] == 200
        await ms.post(third.base + MESSAGES, ms.message("after", activity_id="999"))
        await ms.wait_sent(len(posts) + 1, timeout=60)
    finally:
        assert await third.terminate() == 0
    sent = ms.messages()
    assert sorted(s.text for s in sent) == sorted(
        [*(f"echo: question {n}" for n in range(3)), "echo: after"]
    )
    assert sorted(s.conversation for s in sent[:3]) == sorted(chats)
