"""The chat message path through a real Gateway with the in-memory channel and the fake model."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

from chatgate.clock import SystemClock
from chatgate.model.messages import InboundMessage, default_target
from chatgate.operator.arguments import NoArgs, PairingCodeArgs
from chatgate.operator.catalog import PAIRING_APPROVE, PAIRING_LIST
from chatgate.state.factory import build_state
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import http, load, memory, operator, running, sql, url, write_config

API_KEY = "sk-chat-secret-key"


def chat_config(
    tmp_path: Path,
    fake: FakeLLM,
    *,
    channel: str = "{dm_policy: open}",
    gateway: str = "",
    agent: str = "",
) -> Path:
    return write_config(
        tmp_path,
        f"""{gateway}
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: {API_KEY}
    system_prompt: "You are the chat bot."
    timeout_s: 5
{agent}
channels:
  memory: {channel}
""",
    )


async def test_burst_in_one_session_is_answered_in_order_one_at_a_time(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 0.02
    fake_llm.default_reply = lambda r: f"re: {r.last_user_text}"
    gateway = "  rate_limits: {per_sender: null, per_chat: null}\n"
    async with running(chat_config(tmp_path, fake_llm, gateway=gateway)) as gw:
        chat = memory(gw)
        subs = [await chat.inject(f"message {i}") for i in range(20)]
        await asyncio.gather(*(s.result for s in subs))
    assert chat.texts() == [f"re: message {i}" for i in range(20)]
    assert fake_llm.max_in_flight == 1
    # Each turn carries the growing transcript: system + 2 per earlier turn + the new message.
    assert [len(r.messages) for r in fake_llm.requests] == [2 + 2 * i for i in range(20)]


async def test_different_sessions_run_concurrently(tmp_path: Path, fake_llm: FakeLLM) -> None:
    """A barrier, not a stopwatch: every session's first model call is held open until all of
    them have arrived, which only happens if the turns run at the same time."""
    sessions = 20
    fake_llm.fail_next(Fault.hang(), times=sessions)
    gateway = "  rate_limits: {per_sender: null, per_chat: null}\n"
    async with running(chat_config(tmp_path, fake_llm, gateway=gateway)) as gw:
        chat = memory(gw)
        subs = await asyncio.gather(
            *(
                chat.inject(f"hi {i}", chat_id=f"chat{i}", sender_id=f"user{i}")
                for i in range(sessions)
            )
        )
        await fake_llm.wait_for_requests(sessions, timeout=60)
        held = fake_llm.in_flight
        fake_llm.release()  # the held calls answer 503; the retries get the echo
        results = await asyncio.gather(*(s.result for s in subs))
    assert held == sessions
    assert len(results) == sessions


async def test_transcript_survives_restart_and_new_starts_fresh(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    path = chat_config(tmp_path, fake_llm)
    async with running(path) as gw:
        first = await memory(gw).inject("my name is Ada", message_id="a1")
        await first.result
    async with running(path) as gw:
        chat = memory(gw)
        await (await chat.inject("what is my name?", message_id="b1")).result
        assert [m["content"] for m in fake_llm.requests[-1].messages] == [
            "You are the chat bot.",
            "my name is Ada",
            "echo: my name is Ada",
            "what is my name?",
        ]
        await (await chat.inject("/new", message_id="b2")).result
        await (await chat.inject("hello again", message_id="b3")).result
        assert chat.texts()[-2].startswith("Started a new conversation")
    assert [m["content"] for m in fake_llm.requests[-1].messages] == [
        "You are the chat bot.",
        "hello again",
    ]


async def test_pairing_code_then_cli_approval_then_answered(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    path = chat_config(tmp_path, fake_llm, channel="{dm_policy: pairing}")
    async with running(path) as gw:
        chat = memory(gw)
        result = await (
            await chat.inject("hello?", sender_id="stranger", chat_id="dm-stranger")
        ).result
        assert (result.stage, result.reason) == ("admission", "pairing_required")
        [notice] = await chat.wait_sent(1)
        code = next(
            line for line in notice.text.splitlines() if line.strip() and line.isupper()
        ).strip()
        assert "chatgate" not in notice.text  # the approve command is the operator's
        assert fake_llm.requests == []

        async with http() as client:  # what `chatgate pairing approve` sends the daemon
            body = {"channel": "memory", "code": code.lower()}
            approve = url(gw, "/api/pairing/approve")
            async with client.post(approve, json=body) as resp:
                assert resp.status == 401  # changing state needs the operator's token
            async with client.post(approve, json=body, headers=operator(gw)) as resp:
                assert (await resp.json())["sender_id"] == "stranger"
        await chat.wait_sent(2, timeout=10)  # the daemon notices the approval and tells the user
        answered = await (
            await chat.inject("hello now", sender_id="stranger", chat_id="dm-stranger")
        ).result
    assert answered.reason == "text" and answered.delivery == "sent"
    assert "access" in chat.texts()[1]
    assert chat.texts()[2] == "echo: hello now"


async def test_a_revoked_pairing_applies_at_once_without_a_restart(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    path = chat_config(tmp_path, fake_llm, channel="{dm_policy: pairing}")
    async with running(path) as gw, http() as client:
        chat = memory(gw)
        await (await chat.inject("hi", sender_id="s1", chat_id="d1")).result
        [pending] = (await gw.operate(PAIRING_LIST, NoArgs())).pending
        approve = PairingCodeArgs(channel="memory", code=pending.code)
        assert (await gw.operate(PAIRING_APPROVE, approve)).approved
        assert (await (await chat.inject("in?", sender_id="s1", chat_id="d1")).result).reason == (
            "text"
        )
        body = {"channel": "memory", "sender_id": "s1"}
        revoke = url(gw, "/api/pairing/revoke")
        async with client.post(revoke, json=body, headers=operator(gw)) as resp:
            assert (resp.status, (await resp.json())["found"]) == (200, True)
        after = await (await chat.inject("still in?", sender_id="s1", chat_id="d1")).result
    assert (after.stage, after.reason) == ("admission", "pairing_required")


async def test_group_policies_mention_only_and_observe(tmp_path: Path, fake_llm: FakeLLM) -> None:
    path = chat_config(tmp_path, fake_llm, channel="{group_policy: observe}")
    async with running(path) as gw:
        chat = memory(gw)
        quiet = await (
            await chat.inject("the build is red", chat_kind="group", chat_id="g1", sender_id="bob")
        ).result
        assert (quiet.stage, quiet.reason) == ("observe", "observe")
        assert fake_llm.requests == []
        asked = await chat.inject(
            "@bot why?", chat_kind="group", chat_id="g1", sender_id="carol", mention=True
        )
        await asked.result
    [request] = fake_llm.requests
    assert [m["content"] for m in request.messages][-2:] == ["the build is red", "@bot why?"]
    [sent] = chat.sent
    assert sent.target.reply_to is not None  # answers in groups quote the trigger

    path = chat_config(tmp_path / "m", fake_llm, channel="{group_policy: mention_only}")
    async with running(path) as gw:
        chat = memory(gw)
        dropped = await (await chat.inject("chatter", chat_kind="group", chat_id="g2")).result
    assert (dropped.stage, dropped.reason) == ("admission", "group_mention_only")
    assert len(fake_llm.requests) == 1 and chat.sent == []


async def test_stop_cancels_running_turn_without_a_failure_reply(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 10
    async with running(chat_config(tmp_path, fake_llm)) as gw:
        chat = memory(gw)
        slow = await chat.inject("write a novel")
        await fake_llm.wait_for_requests(1)
        queued = await chat.inject("and a poem")
        await (await chat.inject("/stop")).result
        results = await asyncio.gather(slow.result, queued.result)
    assert chat.texts() == ["Stopped."]
    assert results[0].reason == "cancelled" and results[0].delivery == "suppressed"
    assert (results[1].stage, results[1].reason) == ("command", "stopped")
    assert len(fake_llm.requests) == 1


async def test_collect_policy_merges_messages_sent_mid_turn(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 0.3
    gateway = "  sessions: {mid_turn: collect}\n"
    async with running(chat_config(tmp_path, fake_llm, gateway=gateway)) as gw:
        chat = memory(gw)
        first = await chat.inject("one")
        await fake_llm.wait_for_requests(1)
        rest = [await chat.inject(t) for t in ("two", "three")]
        await asyncio.gather(first.result, *(s.result for s in rest))
    assert len(fake_llm.requests) == 2
    assert [m["content"] for m in fake_llm.requests[1].messages][-2:] == ["two", "three"]
    assert len(chat.sent) == 2


async def test_interrupt_policy_restarts_turn_with_all_messages(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 0.5
    gateway = "  sessions: {mid_turn: interrupt}\n"
    async with running(chat_config(tmp_path, fake_llm, gateway=gateway)) as gw:
        chat = memory(gw)
        first = await chat.inject("book a table")
        await fake_llm.wait_for_requests(1)
        second = await chat.inject("for four people")
        await asyncio.gather(first.result, second.result)
    assert len(chat.sent) == 1  # one answer for both; the interrupted call was never answered
    assert [m["content"] for m in fake_llm.requests[-1].messages][-2:] == [
        "book a table",
        "for four people",
    ]


async def test_delivery_retries_rate_limit_and_dead_letters_forbidden(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    from chatgate.model.messages import SendResult
    from chatgate.model.reasons import SendErrorKind

    async with running(chat_config(tmp_path, fake_llm)) as gw:
        chat = memory(gw)
        chat.failures.append(
            SendResult.failed(SendErrorKind.RATE_LIMITED, "429", retry_after_s=0.05)
        )
        ok = await (await chat.inject("first")).result
        assert ok.delivery == "sent" and chat.send_attempts == 2 and chat.texts() == ["echo: first"]

        chat.failures.append(SendResult.failed(SendErrorKind.FORBIDDEN, "bot was blocked"))
        blocked = await (await chat.inject("second", chat_id="c2", sender_id="u2")).result
        assert blocked.delivery == "dead_target" and chat.send_attempts == 3
        again = await (await chat.inject("third", chat_id="c3", sender_id="u2")).result
        assert again.delivery == "sent"
        entries = await gw.rt.dead_letters.list()
        assert [(e.target.chat_id, e.kind) for e in entries] == [("c2", "forbidden")]
        assert await gw.rt.dead_targets.kind(entries[0].target) == "forbidden"
        # Replaying re-sends (the chat came back) and empties the DLQ.
        replay = await gw.replay_dead_letter(entries[0].id)
        assert replay["status"] == "sent"
        assert await gw.rt.dead_letters.list() == []
    assert chat.texts()[-1] == "echo: second"


async def test_failed_transcript_write_spills_and_raises_event(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    from chatgate.gateway.events import Event, EventName

    path = chat_config(tmp_path, fake_llm)
    events: list[Event] = []
    async with running(path) as gw:
        gw.events.subscribe(events.append, EventName.SESSION_PERSIST_FAILED)

        await sql(
            gw,
            "CREATE TRIGGER fail_writes BEFORE INSERT ON messages"
            " BEGIN SELECT RAISE(ABORT, 'disk full'); END",
        )
        chat = memory(gw)
        result = await (await chat.inject("remember this")).result
        assert result.delivery == "sent"  # the user still gets the answer
        [event] = events
        spill = Path(event.data["spill_path"])
        assert "remember this" in spill.read_text()
        session = gw.rt.cache.get(result.session or "")
        assert session is not None and not session.flushed
        assert gw.rt.cache.evict(session.key) is False  # unflushed sessions are never evicted

        await sql(gw, "DROP TRIGGER fail_writes")
        await (await chat.inject("and this")).result
        assert session.flushed
        stored = await gw.rt.cache.store.load(session.key, 100)
    assert [m.content for m in stored.messages] == [
        "remember this",
        "echo: remember this",
        "and this",
        "echo: and this",
    ]


async def test_rate_limit_notice_once_then_silent_drop(tmp_path: Path, fake_llm: FakeLLM) -> None:
    gateway = "  rate_limits: {per_sender: {rate_per_s: 0.001, burst: 2}, per_chat: null}\n"
    async with running(chat_config(tmp_path, fake_llm, gateway=gateway)) as gw:
        chat = memory(gw)
        results = [await (await chat.inject(f"m{i}")).result for i in range(4)]
    assert [r.reason for r in results] == [
        "text",
        "text",
        "rate_limited_sender",
        "rate_limited_sender",
    ]
    assert len(chat.texts()) == 3 and "faster than I can answer" in chat.texts()[2]
    assert len(fake_llm.requests) == 2


async def test_one_person_on_two_addresses_shares_one_rate_budget(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    gateway = "  rate_limits: {per_sender: {rate_per_s: 0.001, burst: 2}, per_chat: null}\n"
    path = chat_config(tmp_path, fake_llm, gateway=gateway)
    path.write_text(path.read_text() + 'identities:\n  alice: ["memory:a1", "memory:a2"]\n')
    async with running(path) as gw:
        chat = memory(gw)
        sends = [("a1", "c1"), ("a2", "c2"), ("a2", "c2"), ("bob", "c3")]
        results = [
            await (await chat.inject(f"m{i}", sender_id=who, chat_id=chat_id)).result
            for i, (who, chat_id) in enumerate(sends)
        ]
    assert [r.reason for r in results] == ["text", "text", "rate_limited_sender", "text"]


async def test_bot_loop_guard_drops_runaway_bot_conversation(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    gateway = (
        "  loop_guard: {max_bot_turns: 3, window_s: 60}\n"
        "  rate_limits: {per_sender: null, per_chat: null}\n"
    )
    async with running(chat_config(tmp_path, fake_llm, gateway=gateway)) as gw:
        chat = memory(gw)
        results = [
            await (
                await chat.inject(f"bot says {i}", sender_id="otherbot", sender_is_bot=True)
            ).result
            for i in range(5)
        ]
    assert [r.reason for r in results] == ["text", "text", "text", "bot_loop", "bot_loop"]


async def test_failure_reply_model_hang_times_out_visibly(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.fail_next(Fault.hang())
    agent_timeout = "    timeout_s: 0.5\n"
    path = chat_config(tmp_path, fake_llm)
    path.write_text(path.read_text().replace("    timeout_s: 5\n", agent_timeout))
    async with running(path) as gw:
        chat = memory(gw)
        result = await (await chat.inject("hello")).result
        fake_llm.release()
    assert result.reason == "timeout"
    assert "took me too long" in chat.texts()[0]


async def test_help_and_status_commands(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with running(chat_config(tmp_path, fake_llm)) as gw:
        chat = memory(gw)
        await (await chat.inject("/help")).result
        await (await chat.inject("/status")).result
        await chat.wait_sent(2)
    assert "/new" in chat.texts()[0] and "/stop" in chat.texts()[0]
    assert "up and running" in chat.texts()[1] and "fake-model" in chat.texts()[1]
    assert fake_llm.requests == []


async def test_backlog_resumed_after_restart_is_answered_past_the_queue_cap(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """Messages journaled by a process that died were acknowledged to the platform: on restart
    each is answered, although more wait in one session than `max_queued` lets a live burst
    queue and the sender's rate limit would refuse them."""
    gateway = (
        "  sessions: {max_queued: 2}\n"
        "  rate_limits: {per_sender: {rate_per_s: 0.01, burst: 1}, per_chat: null}\n"
    )
    path = chat_config(tmp_path, fake_llm, gateway=gateway)
    loaded = load(path)
    state = build_state(loaded.config.gateway, loaded.config.gateway.state_dir, SystemClock())
    await state.open()
    for i in range(6):
        msg = InboundMessage(
            channel="memory",
            platform="memory",
            chat_id="c1",
            chat_kind="direct",
            sender_id="u1",
            message_id=f"m{i}",
            text=f"backlog {i}",
            received_at=time.time(),
        )
        await state.journal.record(replace(msg, reply_target=default_target(msg)), time.time(), 60)
    await state.close()
    async with running(path) as gw:
        chat = memory(gw)
        await chat.wait_sent(6, timeout=30)
    assert chat.texts() == [f"echo: backlog {i}" for i in range(6)]
