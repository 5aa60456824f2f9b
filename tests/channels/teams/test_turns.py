"""What a user sees during and after a turn in Teams: typing while the model works, an answer
streamed by updating one activity, pasted images and shared files through the media step."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp

from tests.channels.teams.agents import PNG
from tests.channels.teams.support import endpoint, teams_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM
from tests.fakes.teams import FakeTeams
from tests.harness import running, url
from tests.media.samples import pdf, png

VISION = "timeout_s: 10\n    media:\n      vision: true\n"


async def test_typing_while_the_model_works_then_the_answer(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    fake_llm.latency_s = 2.5
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        await ms.post(endpoint(gw), ms.message("slow one", activity_id="4001"))
        [answer] = await ms.wait_sent(1)
    typings = ms.typings()
    assert typings and all(t.conversation == "a:1personal-chat" for t in typings)
    assert max(t.at for t in typings) < answer.at
    assert answer.text == "echo: slow one"


async def test_a_streamed_answer_grows_in_one_activity(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    fake_llm.stream_chunk_delay_s = 0.05
    channel = "    dm_policy: open\n    stream: {enabled: true, min_edit_interval_s: 0.2}\n"
    words = " ".join(f"word{n}" for n in range(24))
    fake_llm.script(words)
    config = teams_config(tmp_path, ms, fake_llm, channel=channel)
    config.write_text(
        config.read_text().replace("timeout_s: 10\n", "timeout_s: 10\n    stream: true\n")
    )
    async with running(config) as gw:
        await ms.post(endpoint(gw), ms.message("story", activity_id="4101"))
        entry = await settled(gw, "teams:a%3A1personal-chat/4101", timeout=30)
    posts = [s for s in ms.messages() if s.method == "POST"]
    updates = [s for s in ms.messages() if s.method == "PUT"]
    assert len(posts) == 1 and updates, [s.method for s in ms.messages()]
    assert {u.id for u in updates} == {posts[0].id}
    assert posts[0].text.endswith("…") and updates[-1].text == words
    assert entry.delivery_ids == [posts[0].id]


async def test_a_pasted_image_is_fetched_with_the_bot_token_and_shown_to_the_model(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    ms.files["img-1"] = (png(), "image/png")
    config = teams_config(tmp_path, ms, fake_llm)
    config.write_text(config.read_text().replace("timeout_s: 10\n", VISION, 1))
    async with running(config) as gw:
        activity = ms.message("what is this?", attachments=[ms.inline_image()])
        await ms.post(endpoint(gw), activity)
        await ms.wait_sent(1)
    assert ms.fetches == [("/v3/attachments/img-1/views/original", True)]
    parts = fake_llm.requests[0].messages[-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"]


async def test_a_shared_file_is_fetched_from_its_link_without_the_token(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    ms.files["doc-1"] = (pdf("Offsite moved to Thursday"), "application/pdf")
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        shared = ms.shared_file("doc-1", "memo.pdf", "pdf")
        await ms.post(endpoint(gw), ms.message("", attachments=[shared]))
        await ms.wait_sent(1)
    assert ms.fetches == [("/shared/doc-1", False)]
    assert "Offsite moved to Thursday" in str(fake_llm.requests[0].last_user_text)


GROUP = "19:group-chat@thread.v2"


async def test_a_file_in_a_group_chat_is_a_signed_link_on_the_public_url(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    channel = (
        "    dm_policy: open\n    group_policy: respond_all\n"
        "    public_url: https://bot.example.com/teams/messages\n"
    )
    config = teams_config(tmp_path, ms, fake_llm, agent="files", channel=channel)
    async with running(config) as gw:
        asked = ms.message("chart please", conversation=GROUP, kind="groupChat", activity_id="4201")
        await ms.post(endpoint(gw), asked)
        [text, sent] = await ms.wait_sent(2)
        link = re.search(r"\((https://bot\.example\.com(/[^)]+))\)", sent.text)
        assert link is not None, sent.text
        async with aiohttp.ClientSession() as http, http.get(url(gw, link.group(2))) as response:
            served = (response.status, await response.read())
    assert text.text == "Here is the chart."
    assert sent.text.startswith("📎 [chart.png](https://bot.example.com/")
    assert sent.text.endswith("\nQ3") and sent.card is None
    assert served == (200, PNG)


async def test_without_a_public_url_a_file_is_named_not_linked(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    channel = "    dm_policy: open\n    group_policy: respond_all\n"
    async with running(teams_config(tmp_path, ms, fake_llm, agent="files", channel=channel)) as gw:
        asked = ms.message("chart please", conversation=GROUP, kind="groupChat", activity_id="4301")
        await ms.post(endpoint(gw), asked)
        [_, sent] = await ms.wait_sent(2)
    assert "chart.png could not be attached" in sent.text and "http" not in sent.text
