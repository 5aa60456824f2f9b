"""End to end through the real PTB: send failures, retries, fallbacks, presence signals, costs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from chatgate.model.messages import Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import DeliveryStatus
from tests.channels.telegram.helpers_b import key_of, settled, telegram_section
from tests.channels.telegram.support import telegram_config
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram, FaultSpec
from tests.harness import running
from tests.support.waiting import eventually

OPEN = "    dm_policy: open"
TIMEOUT = 15.0
USER = 42


@pytest.mark.filterwarnings("ignore::DeprecationWarning:telegram.*")  # PTB's own RetryAfter(int)
async def test_rate_limited_send_is_retried_once_after_retry_after(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_tg.fail("sendMessage", FaultSpec(429, "Too Many Requests: retry after 1", retry_after=1))
    async with running(telegram_config(tmp_path, fake_tg, fake_llm, channel=OPEN)) as gw:
        update = fake_tg.dm(USER, "hi")
        entry = await settled(gw, key_of(update))
        assert await gw.rt.dead_letters.list() == []
    first, second = fake_tg.calls_of("sendMessage")
    assert second.at - first.at >= 1.0  # Telegram's retry_after was honoured
    assert entry.delivery == DeliveryStatus.SENT
    assert [m["text"] for m in fake_tg.sent] == ["echo: hi"]


async def test_reply_burst_keeps_at_most_send_concurrency_requests_in_flight(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_tg.fail("sendMessage", FaultSpec(200, "slow API", delay_s=0.3), times=6)
    channel = OPEN + "\n    send_concurrency: 2"
    async with running(telegram_config(tmp_path, fake_tg, fake_llm, channel=channel)):
        for user in range(100, 106):
            fake_tg.dm(user, f"hi from {user}")
        await fake_tg.wait_for("sendMessage", count=6, timeout=TIMEOUT)
    assert fake_tg.max_in_flight["sendmessage"] == 2  # saturated, and never more
    assert sorted(m["text"] for m in fake_tg.sent) == [
        f"echo: hi from {u}" for u in range(100, 106)
    ]


async def test_forbidden_is_not_retried_and_marks_the_chat_dead(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 0.3  # the second message is queued before the first reply fails
    fake_tg.fail("sendMessage", FaultSpec(403, "Forbidden: bot was blocked by the user"))
    async with running(telegram_config(tmp_path, fake_tg, fake_llm, channel=OPEN)) as gw:
        first = fake_tg.dm(USER, "hi")
        second = fake_tg.dm(USER, "are you there?")
        blocked = await settled(gw, key_of(first))
        skipped = await settled(gw, key_of(second))
        assert blocked.delivery == skipped.delivery == DeliveryStatus.DEAD_TARGET
        assert len(fake_tg.calls_of("sendMessage")) == 1  # no retry, and no try for the second
        letters = await gw.rt.dead_letters.list()
        assert sorted(x.inbound_key or "" for x in letters) == sorted(
            [key_of(first), key_of(second)]
        )
        assert {(x.target.address, x.kind) for x in letters} == {(f"telegram:{USER}", "forbidden")}

        later = await gw.rt.delivery.deliver(
            Target("telegram", str(USER)), OutboundMessage.from_text("a scheduled reminder")
        )
        assert later.status is DeliveryStatus.DEAD_TARGET
        assert len(fake_tg.calls_of("sendMessage")) == 1  # the platform was not asked again

        fake_tg.dm(USER, "I unblocked you")  # the user writing again revives the chat
        await fake_tg.wait_for("sendMessage", count=2, timeout=TIMEOUT)
    assert fake_tg.sent[-1]["text"] == "echo: I unblocked you"


async def test_unparseable_html_is_resent_once_as_plain_text(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.script("**Done**: a < b")
    fake_tg.fail("sendMessage", FaultSpec(400, "Bad Request: can't parse entities: bad tag"))
    async with running(telegram_config(tmp_path, fake_tg, fake_llm, channel=OPEN)) as gw:
        update = fake_tg.dm(USER, "compare")
        entry = await settled(gw, key_of(update))
    html, plain = fake_tg.calls_of("sendMessage")
    assert (html.params["parse_mode"], html.params["text"]) == ("HTML", "<b>Done</b>: a &lt; b")
    assert "parse_mode" not in plain.params
    assert plain.params["text"] == "Done: a < b"
    assert entry.delivery == DeliveryStatus.SENT
    assert len(fake_tg.sent) == 1


async def test_migrated_group_is_answered_in_the_new_supergroup(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    old, new = -4001, -1004001
    upgraded = "Bad Request: group chat was upgraded to a supergroup chat"
    fake_tg.fail("sendMessage", FaultSpec(400, upgraded, migrate_to_chat_id=new))
    async with running(telegram_config(tmp_path, fake_tg, fake_llm)) as gw:
        update = fake_tg.group_message(old, 7, "ping", mention=True, chat_type="group")
        entry = await settled(gw, key_of(update))
    first, second = fake_tg.calls_of("sendMessage")
    assert (first.params["chat_id"], second.params["chat_id"]) == (old, new)
    assert second.params["text"] == "echo: ping"
    assert [m["chat"]["id"] for m in fake_tg.sent] == [new]
    assert entry.delivery == DeliveryStatus.SENT


async def test_edited_message_costs_no_model_call_and_is_counted(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    async with running(telegram_config(tmp_path, fake_tg, fake_llm, channel=OPEN)) as gw:
        fake_tg.dm(USER, "first")
        await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        fake_tg.edited(USER, USER, "first, edited")
        fake_tg.edited(USER, USER, "first, edited again")
        counts = await eventually(
            lambda: telegram_section(gw).get("ignored", {}).get("edited_ignored") == 2
        )
        assert counts
        fake_tg.dm(USER, "second")
        await fake_tg.wait_for("sendMessage", count=2, timeout=TIMEOUT)
        section = telegram_section(gw)
    assert [r.last_user_text for r in fake_llm.requests] == ["first", "second"]
    assert section["ignored"] == {"edited_ignored": 2}


async def test_typing_is_shown_while_a_slow_model_runs(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 1.5
    async with running(telegram_config(tmp_path, fake_tg, fake_llm, channel=OPEN)):
        fake_tg.dm(USER, "think hard")
        [reply] = await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
    [request] = fake_llm.requests
    typing = [c for c in fake_tg.calls_of("sendChatAction") if c.params["action"] == "typing"]
    assert typing and typing[0].params["chat_id"] == USER
    assert typing[0].at < request.at + 1.5 <= reply.at  # shown before the model answered
    assert reply.at - typing[0].at >= 1.0


async def test_typing_hints_do_not_queue_behind_busy_send_slots(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    """A typing hint that finds every send slot taken is skipped (queued, it would show late and
    hold replies back); the replies all go out."""
    fake_llm.latency_s = 1.2  # every turn outlasts the 0.5 s after which typing is shown
    fake_tg.fail("sendChatAction", FaultSpec(200, "slow API", delay_s=1.0))  # holds the slot
    users = range(200, 206)
    channel = OPEN + "\n    send_concurrency: 1"
    async with running(telegram_config(tmp_path, fake_tg, fake_llm, channel=channel)):
        for user in users:
            fake_tg.dm(user, f"hi from {user}")
        await fake_tg.wait_for("sendMessage", count=len(users), timeout=TIMEOUT)
    typing = fake_tg.calls_of("sendChatAction")
    assert 1 <= len(typing) < len(users)
    assert sorted(m["text"] for m in fake_tg.sent) == [f"echo: hi from {u}" for u in users]


async def test_ack_reaction_marks_the_trigger_when_the_turn_starts(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 0.8
    channel = f'{OPEN}\n    ack_reaction: "👀"'
    async with running(telegram_config(tmp_path, fake_tg, fake_llm, channel=channel)):
        update = fake_tg.dm(USER, "hello")
        await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
    [reaction] = fake_tg.calls_of("setMessageReaction")
    [request] = fake_llm.requests
    assert reaction.params["chat_id"] == USER
    assert reaction.params["message_id"] == update["message"]["message_id"]
    assert reaction.params["reaction"] == [{"type": "emoji", "emoji": "👀"}]
    assert reaction.at < request.at + fake_llm.latency_s  # before the model had answered


async def _requests_per_dm(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, channel: str
) -> list[Counter[str]]:
    """Bot API requests (long polls excluded) spent on each of three answered DMs: from its
    update to the next one's (the last one's to the gateway's stop), so a straggler counts.

    On a manual clock every answer is fast (no typing hint), however loaded the machine."""
    marks: list[int] = []
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel=channel)
    async with running(config, clock=ManualClock()) as gw:
        await fake_tg.wait_for("getUpdates", timeout=TIMEOUT)
        for n in range(3):
            marks.append(len(fake_tg.calls))
            update = fake_tg.dm(USER + n, f"question {n}")
            await settled(gw, key_of(update), timeout=TIMEOUT)
    ends = [*marks[1:], len(fake_tg.calls)]
    return [
        Counter(c.method for c in fake_tg.calls[mark:end] if c.method.lower() != "getupdates")
        for mark, end in zip(marks, ends, strict=True)
    ]


async def test_request_count_per_answered_dm(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    per_dm = await _requests_per_dm(tmp_path, fake_tg, fake_llm, OPEN)
    print("requests per answered DM:", [dict(c) for c in per_dm])
    # A fast answer needs no typing indicator: one sendMessage per DM.
    assert per_dm == [Counter({"sendMessage": 1})] * 3


async def test_request_count_per_answered_dm_with_ack_reaction(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    channel = f'{OPEN}\n    ack_reaction: "👀"'
    per_dm = await _requests_per_dm(tmp_path, fake_tg, fake_llm, channel)
    print("requests per answered DM with ack:", [dict(c) for c in per_dm])
    expected = Counter({"setMessageReaction": 1, "sendMessage": 1})
    assert per_dm == [expected] * 3
