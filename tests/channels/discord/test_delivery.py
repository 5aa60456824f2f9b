"""Outbound to Discord: rate limits, dead targets, chunking, typing, streaming, reactions, status."""

from __future__ import annotations

from pathlib import Path

from tests.channels.discord.support import discord_config, section, settled
from tests.fakes.discord_lite import (
    MISSING_PERMISSIONS,
    UNAVAILABLE,
    UNKNOWN_CHANNEL,
    FakeDiscord,
    rate_limited,
)
from tests.fakes.llm import FakeLLM
from tests.harness import running
from tests.support.spacing import assert_spaced
from tests.support.spans import Spans, failed, retries

SEND = "POST /channels/{id}/messages"
TYPING = "POST /channels/{id}/typing"
EDIT = "PATCH /channels/{id}/messages/{id}"


async def test_a_429_is_honoured_and_the_reply_delivered_once(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_discord.fail(SEND, rate_limited(0.3))
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        fake_discord.dm(3000, "hello")
        [sent] = await fake_discord.wait_for(SEND)
        assert await gw.pipeline.scheduler.wait_idle(10)  # every turn, and any duplicate, has run
    attempts = [c for c in fake_discord.calls if c.route == SEND]
    assert [c.status for c in attempts] == [429, 200]
    assert attempts[1].at - attempts[0].at >= 0.3
    assert len(fake_discord.created) == 1 and sent.json["content"] == "echo: hello"


async def test_a_global_rate_limit_holds_every_send_then_all_arrive(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_discord.fail(SEND, rate_limited(0.3, is_global=True))
    async with running(discord_config(tmp_path, fake_discord, fake_llm)):
        for user in (3001, 3002, 3003):
            fake_discord.dm(user, f"hi {user}")
        await fake_discord.wait_for(SEND, 3)
    assert len(fake_discord.created) == 3


async def test_missing_permissions_goes_to_the_dlq_without_a_retry_storm(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM, spans: Spans
) -> None:
    fake_discord.fail(SEND, MISSING_PERMISSIONS, MISSING_PERMISSIONS)
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        first = fake_discord.post(4000, "hi", guild_id=5000, mention=True)
        entry = await settled(gw, f"discord:{first['id']}")
        second = fake_discord.post(4000, "again", guild_id=5000, mention=True)
        await settled(gw, f"discord:{second['id']}")
        dlq = await gw.rt.dead_letters.list()
        status = section(gw)
    attempts = [c for c in fake_discord.calls if c.route == SEND]
    assert [c.status for c in attempts] == [403, 403]  # one attempt per reply, none repeated
    assert (entry.stage, entry.reason, entry.delivery) == ("delivery", "forbidden", "dead_target")
    assert [(d.kind, d.error) for d in dlq] == [
        ("forbidden", "403 (50013): Missing Permissions")
    ] * 2
    assert status["state"] == "running"
    assert "Send Messages" in status["last_error"]["hint"]
    # traced: each reply's one call is an error span in its message's trace, the dead letter
    # marks its turn failed
    calls = spans.deliveries("discord createMessage")
    assert len(calls) == 2 and all(failed(c) for c in calls)
    assert all(failed(spans.turn_of(c)) and not retries(spans.turn_of(c)) for c in calls)


async def test_an_unknown_channel_is_target_not_found(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_discord.fail(SEND, UNKNOWN_CHANNEL)
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        message = fake_discord.dm(3000, "hi")
        entry = await settled(gw, f"discord:{message['id']}")
    assert (entry.reason, entry.delivery) == ("target_not_found", "dead_target")


async def test_a_503_is_transient_and_retried_by_delivery(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM, spans: Spans
) -> None:
    fake_discord.fail(SEND, UNAVAILABLE)
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        message = fake_discord.dm(3000, "hello")
        entry = await settled(gw, f"discord:{message['id']}")
    assert [c.status for c in fake_discord.calls if c.route == SEND] == [503, 200]
    assert entry.delivery == "sent" and len(fake_discord.created) == 1
    # traced: one client span per REST call under the turn, the retry an event on the turn
    first, second = spans.deliveries("discord createMessage")
    assert failed(first) and not failed(second)
    turn = spans.turn_of(second)
    assert retries(turn) == ["transient"] and not failed(turn)


async def test_a_5k_answer_arrives_in_chunks_under_2000_with_an_intact_code_block(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    code = "\n".join(f"    total_{i} = compute(x_{i}) * 2  # 🚀" for i in range(80))
    prose = " ".join(f"Sentence {i} explains a step." for i in range(70))
    answer = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert len(answer) >= 5000
    fake_llm.script(answer)
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        fake_discord.post(4000, "the long one", guild_id=5000, mention=True)
        await fake_discord.wait_for(SEND, 3)
        assert await gw.pipeline.scheduler.wait_idle(10)  # every turn, and any duplicate, has run
    sent = fake_discord.sent()
    code_seen = ""
    for call in sent:
        text = call.json["content"]
        assert len(text.encode("utf-16-le")) // 2 <= 2000
        assert text.count("```") % 2 == 0
        code_seen += "".join(text.split("```")[1::2])
    assert all(f"total_{i} = compute(x_{i}) * 2  # 🚀" in code_seen for i in range(80))
    assert "message_reference" in sent[0].json
    assert all("message_reference" not in c.json for c in sent[1:])  # only the first quotes


async def test_typing_shows_while_a_slow_model_runs_and_the_ack_reaction_is_set(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 1.2
    config = discord_config(tmp_path, fake_discord, fake_llm, extra='    ack_reaction: "👀"\n')
    async with running(config):
        asked = fake_discord.post(4000, "think hard", guild_id=5000, mention=True)
        [typing] = await fake_discord.wait_for(TYPING, timeout=30)
        assert fake_discord.sent() == []  # still thinking
        [sent] = await fake_discord.wait_for(SEND, timeout=30)
    [reaction] = [c for c in fake_discord.calls if "/reactions/" in c.path]
    assert typing.path == "/channels/4000/typing" and typing.at < sent.at
    assert reaction.method == "PUT" and reaction.path.startswith(
        f"/channels/4000/messages/{asked['id']}/"
    )


async def test_streaming_edits_a_draft_no_faster_than_the_interval(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    reply = " ".join(f"word{i}" for i in range(24))
    fake_llm.script(reply)
    fake_llm.stream_chunk_delay_s = 0.05
    channel = "    dm_policy: open\n    stream: {enabled: true, min_edit_interval_s: 0.3}\n"
    config = discord_config(tmp_path, fake_discord, fake_llm, channel=channel)
    config.write_text(
        config.read_text().replace("    timeout_s: 10\n", "    timeout_s: 10\n    stream: true\n")
    )
    async with running(config):
        fake_discord.dm(3000, "tell me a story")
        await fake_discord.wait_for(
            EDIT, where=lambda c: c.json.get("content") == reply, timeout=30
        )
    [draft] = fake_discord.sent()
    edits = fake_discord.calls_to(EDIT)
    assert draft.json["content"].endswith("…") and len(edits) >= 2
    assert_spaced([c.at for c in [draft, *edits]], 0.3)


async def test_status_shows_shards_guilds_and_latency(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    async with running(discord_config(tmp_path, fake_discord, fake_llm)) as gw:
        status = section(gw)
    assert status["state"] == "running" and status["bot"] == "fakebot"
    assert status["guilds"] == 1 and [s["id"] for s in status["shards"]] == [0]
    assert status["summary"].startswith("@fakebot · 1 shard · 1 guild · latency ")
