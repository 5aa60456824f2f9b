"""Slack over the Events API: real slack-bolt in chatgate's HTTP server, signed pushes from the
fake Slack, the answer through slack_sdk to the fake Web API and the model through litellm."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.channels.slack.support import events_url, section, slack_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import BOT_USER_ID, FakeSlack
from tests.harness import running
from tests.support.waiting import eventually


async def test_a_dm_is_answered_in_the_dm(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        event = fake_slack.message_event("hello *bot* &amp; &lt;friends&gt;", channel="D1")
        status, _ = await fake_slack.post_event(events_url(gw), event)
        assert status == 200
        [post] = await fake_slack.wait_posts(1, timeout=15)
    assert post["channel"] == "D1" and "thread_ts" not in post
    assert post["text"] == "echo: hello _bot_ &amp; &lt;friends&gt;"  # markdown *x* is italic
    assert fake_llm.requests[0].last_user_text == "hello *bot* & <friends>"


async def test_an_app_mention_is_answered_in_its_thread_and_the_thread_keeps_its_session(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    fake_llm.script("first answer", "second answer", "third answer")
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        url = events_url(gw)
        one = fake_slack.app_mention_event("remember apples")
        assert (await fake_slack.post_event(url, one))[0] == 200
        await fake_slack.wait_posts(1, timeout=15)
        two = fake_slack.app_mention_event("remember pears")
        assert (await fake_slack.post_event(url, two))[0] == 200
        await fake_slack.wait_posts(2, timeout=15)
        # a reply in the first thread, without naming the bot: the bot answered there
        follow = fake_slack.message_event(
            "what did I say?", channel="C1", channel_type="channel", thread_ts=one["ts"]
        )
        assert (await fake_slack.post_event(url, follow))[0] == 200
        posts = await fake_slack.wait_posts(3, timeout=15)
    assert [p["thread_ts"] for p in posts] == [one["ts"], two["ts"], one["ts"]]
    history = [m["content"] for m in fake_llm.requests[2].messages if m["role"] != "system"]
    assert history == ["remember apples", "first answer", "what did I say?"]


async def test_message_and_app_mention_of_one_message_and_a_slack_retry_run_one_turn(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        url = events_url(gw)
        mention = fake_slack.app_mention_event("once please")
        as_message = {**mention, "type": "message", "channel_type": "channel"}
        assert (await fake_slack.post_event(url, mention, event_id="Ev1"))[0] == 200
        assert (await fake_slack.post_event(url, as_message, event_id="Ev2"))[0] == 200
        retried = await fake_slack.post_event(
            url, mention, event_id="Ev1", retry_num=1, retry_reason="http_timeout"
        )
        assert retried[0] == 200
        await fake_slack.wait_posts(1, timeout=15)
        entry = await settled(gw, f"slack:C1:{mention['ts']}", timeout=15)
    assert entry.state == "done"
    assert len(fake_llm.requests) == 1 and len(fake_slack.posted()) == 1


async def test_bad_missing_and_stale_signatures_get_401_and_run_nothing(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        url = events_url(gw)
        bad = await fake_slack.post_event(
            url, fake_slack.message_event("forged"), bad_signature=True
        )
        stale = await fake_slack.post_event(
            url, fake_slack.message_event("replayed"), timestamp=int(time.time()) - 360
        )
        wrong_secret = await fake_slack.post_url_verification(url, signing_secret="guess")
        assert fake_slack._session is not None
        async with fake_slack._session.post(url, data=b"{}") as unsigned:
            assert unsigned.status == 401
        ok = await fake_slack.post_url_verification(url, challenge="c-123")
        assert section(gw)["state"] == "running"
        assert await gw.rt.journal.find("slack", limit=10) == []
    assert [bad[0], stale[0], wrong_secret[0]] == [401, 401, 401]
    assert json.loads(bad[1]) == {"error": "invalid request"}
    assert ok[0] == 200 and json.loads(ok[1]) == {"challenge": "c-123"}
    assert fake_llm.requests == [] and fake_slack.posted() == []


async def test_the_event_is_journaled_before_slack_gets_its_200(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    from tests.fakes.llm import Fault

    fake_llm.fail_next(Fault.hang())  # the model never answers until released
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        event = fake_slack.message_event("slow one", channel="D1")
        status, _ = await fake_slack.post_event(events_url(gw), event)
        assert status == 200
        entry = await gw.rt.journal.get(f"slack:D1:{event['ts']}")
        assert entry is not None and entry.state != "done"
        await fake_llm.wait_for_requests(1, timeout=15)
        assert fake_slack.posted() == []
        fake_llm.release()


async def test_own_messages_edits_and_joins_are_ignored_with_a_reason(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        url = events_url(gw)
        events = [
            fake_slack.message_event("me", user=BOT_USER_ID, bot_id="BBOT", channel="D1"),
            fake_slack.message_event("edit", channel="D1", subtype="message_changed"),
            fake_slack.message_event("joined", channel="C1", subtype="channel_join"),
            {"type": "reaction_added", "user": "U42", "reaction": "eyes", "item": {}},
        ]
        for event in events:
            assert (await fake_slack.post_event(url, event))[0] == 200

        def ignored() -> dict[str, int] | None:
            counts = section(gw).get("ignored") or {}
            return counts if sum(counts.values()) == 4 else None

        counts = await eventually(ignored, timeout=10)
    assert counts == {
        "self_message": 1,
        "edited_ignored": 1,
        "system_message": 1,
        "reaction_ignored": 1,  # reactions: ignore (the default), and it names no message
    }
    assert fake_llm.requests == []


async def test_a_thread_the_bot_answered_needs_no_mention_after_a_restart(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = slack_config(tmp_path, fake_slack, fake_llm)
    fake_llm.script("noted", "you said apples")
    async with running(config) as gw:
        mention = fake_slack.app_mention_event("remember apples")
        await fake_slack.post_event(events_url(gw), mention)
        await fake_slack.wait_posts(1, timeout=15)
    async with running(config) as gw:  # a new process: nothing in memory about the thread
        url = events_url(gw)
        follow = fake_slack.message_event(
            "what did I say?", channel="C1", channel_type="channel", thread_ts=mention["ts"]
        )
        elsewhere = fake_slack.message_event(
            "unrelated chatter", channel="C1", channel_type="channel", thread_ts="1.000001"
        )
        for event in (follow, elsewhere):
            assert (await fake_slack.post_event(url, event))[0] == 200
        posts = await fake_slack.wait_posts(2, timeout=15)
        other = await settled(gw, f"slack:C1:{elsewhere['ts']}", timeout=15)
    assert posts[1]["text"] == "you said apples" and posts[1]["thread_ts"] == mention["ts"]
    assert other.reason == "group_mention_only"  # a thread the bot never joined stays quiet
    assert len(fake_llm.requests) == 2
