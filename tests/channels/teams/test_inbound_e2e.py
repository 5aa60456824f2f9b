"""Teams end to end: the real gateway with the channel on its HTTP port, signed activities from
the fake Teams, answers through the fake Bot Connector via the Teams SDK."""

from __future__ import annotations

from pathlib import Path

from tests.channels.teams.support import CHANNEL, endpoint, teams_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM
from tests.fakes.teams import OTHER_TENANT, FakeTeams
from tests.harness import channel_status, running


async def test_bad_tokens_get_401_and_nothing_is_stored(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        url = endpoint(gw)
        activity = ms.message("forged")
        answers = [
            await ms.post(url, activity, signed=False),
            await ms.post(url, activity, token=ms.token(forged=True)),
            await ms.post(url, activity, token=ms.token(expires_in=-600)),
            await ms.post(url, activity, token=ms.token(audience="another-app")),
            await ms.post(url, activity, token=ms.token(service_url="https://evil.example/")),
            await ms.post(url, activity, token=ms.token(issuer="https://sts.example")),
            await ms.post(url, activity, token="Bearer not-a-jwt"),
        ]
        assert await gw.rt.journal.find("teams", sender_id="aad-user-1") == []
        unverified = channel_status(gw, "teams")["counters"]["unverified"]
    assert [status for status, _ in answers] == [401] * 7
    assert all("unauthorized" in body for _, body in answers)
    assert fake_llm.requests == [] and ms.messages() == []
    assert unverified == 7


async def test_an_expired_token_within_the_skew_is_accepted(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        status, _ = await ms.post(endpoint(gw), ms.message("late"), token=ms.token(expires_in=-60))
        await ms.wait_sent(1)
    assert status == 200


async def test_a_personal_chat_is_answered_once_with_a_cached_token(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        activity = ms.message("hello **there**", activity_id="1001")
        for _ in range(3):  # Teams retries when it misses the 200
            assert (await ms.post(endpoint(gw), activity))[0] == 200
        second = ms.message("again", activity_id="1002")
        assert (await ms.post(endpoint(gw), second))[0] == 200
        first, again = await ms.wait_sent(2)
        entry = await settled(gw, "teams:a%3A1personal-chat/1001")
    assert first.conversation == "a:1personal-chat"
    assert first.text == "echo: hello **there**" and first.activity["textFormat"] == "markdown"
    assert again.text == "echo: again"
    assert len(fake_llm.requests) == 2 and fake_llm.requests[0].last_user_text == "hello **there**"
    assert entry.state == "done" and entry.delivery_ids == [first.id]
    assert len(ms.token_requests) == 1  # one client-credentials call, then the cache
    assert ms.token_requests[0]["scope"] == "https://api.botframework.com/.default"


async def test_channel_threads_answer_only_mentions_in_their_thread(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    root = f"{CHANNEL};messageid=5000"
    async with running(teams_config(tmp_path, ms, fake_llm, channel="")) as gw:
        quiet = ms.message("just chatting", conversation=root, kind="channel", activity_id="5000")
        asked = ms.message(
            "what is up", conversation=root, kind="channel", activity_id="5001", mention=True
        )
        assert (await ms.post(endpoint(gw), quiet))[0] == 200
        assert (await ms.post(endpoint(gw), asked))[0] == 200
        [reply] = await ms.wait_sent(1)
        dropped = await settled(gw, f"teams:{CHANNEL.replace(':', '%3A')}/5000")
    assert reply.conversation == root  # into the thread
    assert reply.text == "echo: what is up"  # the <at> mention cut from the text
    assert fake_llm.requests[-1].last_user_text == "what is up"
    assert (dropped.stage, dropped.reason) == ("admission", "group_mention_only")


async def test_other_tenants_and_installs_are_recorded_not_answered(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    extra = "    tenant_id: 72f988bf-0000-4000-8000-0000000000aa\n"
    async with running(teams_config(tmp_path, ms, fake_llm, extra=extra)) as gw:
        outsider = ms.message("hi", tenant=OTHER_TENANT, conversation="a:1outsider")
        assert (await ms.post(endpoint(gw), outsider))[0] == 200
        assert (await ms.post(endpoint(gw), ms.added()))[0] == 200
        assert (await ms.post(endpoint(gw), ms.message("member")))[0] == 200
        await ms.wait_sent(1)
        ignored = channel_status(gw, "teams")["ignored"]
    assert ignored == {"tenant_not_allowed": 1, "conversation_update": 1}
    assert [s.conversation for s in ms.messages()] == ["a:1personal-chat"]
