"""A pause reaches work already under way, through a real Gateway (in-memory channel, fake model
through litellm, manual clock where time matters): queued turns are held (kept as context,
journaled `paused`), a running one finishes unless `interrupt_running`; a pause runs out by
itself on the clock and tells the operator chat; a scheduled run aimed at a paused chat is held;
an operator reply replayed from the DLQ joins the transcript."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chatgate.gateway.app import Gateway
from chatgate.model.messages import SendResult
from chatgate.model.reasons import SendErrorKind
from chatgate.policies.takeover import ran_out_text
from chatgate.schedules.feature import Schedules
from chatgate.state.admin import trail
from chatgate.takeover.feature import TakeoverFeature
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, Fault
from tests.gateway.test_chat_pipeline import chat_config
from tests.gateway.test_webhook_e2e import ASYNC_ROUTE, gh_config, gh_headers, issue_body
from tests.harness import http, memory, running, url
from tests.schedules.test_scheduler import HOURLY, T0
from tests.schedules.test_scheduler import config as schedule_config
from tests.support.waiting import eventually

CHAT = "memory:c1"
SESSION = "default:memory:c1"


def slow(text: str) -> Fault:
    """A model answer that waits until `FakeLLM.release()`, then succeeds with ``text``."""
    body = {
        "id": "chatcmpl-slow",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return Fault(200, body, hang=True)


def said(request: Any) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in request.messages if m["role"] != "system"]


async def journal_of(gw: Gateway, key: str) -> tuple[str | None, str | None, str]:
    entry = await gw.rt.journal.get(key)
    assert entry is not None
    return entry.stage, entry.reason, entry.state.value


async def test_a_pause_holds_queued_turns_and_lets_the_running_answer_finish(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(slow("slow answer"))
    async with running(chat_config(tmp_path, fake_llm)) as gw:
        chat = memory(gw)
        first = await chat.inject("first")
        await fake_llm.wait_for_requests(1, timeout=60)
        second = await chat.inject("second")  # waits behind the running turn
        renew = await chat.inject("/new")  # a queued command is kept as text too
        await gw.feature(TakeoverFeature).service.pause(CHAT, "cli", for_s=0)
        fake_llm.release()
        answered, held, held_new = [await s.result for s in (first, second, renew)]
        assert (answered.stage, answered.reason) == ("turn", "text")
        assert chat.texts() == ["slow answer"]  # the running answer was still sent
        assert [(r.stage, r.reason) for r in (held, held_new)] == [("observe", "paused")] * 2
        assert await journal_of(gw, second.key) == ("observe", "paused", "done")
        assert len(fake_llm.requests) == 1
        metrics = gw.metrics_text().decode()
        assert 'chatgate_takeover_total{channel="memory",reason="paused"} 2.0' in metrics

        assert await gw.feature(TakeoverFeature).service.resume(CHAT, "cli")
        after = await (await chat.inject("third")).result
        assert after.reason == "text"
    assert said(fake_llm.requests[1]) == [
        ("user", "first"),
        ("assistant", "slow answer"),
        ("user", "second"),
        ("user", "/new"),
        ("user", "third"),
    ]


async def test_interrupt_running_cancels_the_answer_being_written_and_keeps_it_as_context(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(slow("never sent"))
    gateway = "  takeover: {interrupt_running: true}\n"
    async with running(chat_config(tmp_path, fake_llm, gateway=gateway)) as gw:
        chat = memory(gw)
        first = await chat.inject("first")
        await fake_llm.wait_for_requests(1, timeout=60)
        second = await chat.inject("second")
        await gw.feature(TakeoverFeature).service.pause(CHAT, "cli", for_s=0)
        results = [await first.result, await second.result]  # the model is still hanging
        assert [(r.stage, r.reason) for r in results] == [("observe", "paused")] * 2
        assert await journal_of(gw, first.key) == ("observe", "paused", "done")
        fake_llm.release()
        assert chat.sent == []
        lines = await gw.rt.state.sessions.transcript(SESSION)
        assert lines is not None and [(x.role, x.content) for x in lines] == [
            ("user", "first"),
            ("user", "second"),
        ]
        await gw.feature(TakeoverFeature).service.resume(CHAT, "cli")
        await (await chat.inject("third")).result
    assert said(fake_llm.requests[-1]) == [("user", "first"), ("user", "second"), ("user", "third")]


async def test_a_pause_runs_out_on_the_clock_and_the_operator_is_told(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    clock = ManualClock()
    gateway = "  operator_notify: memory:ops\n  takeover: {auto_resume_s: 600}\n"
    async with running(chat_config(tmp_path, fake_llm, gateway=gateway), clock=clock) as gw:
        chat = memory(gw)
        pause = await gw.feature(TakeoverFeature).service.pause(CHAT, "cli")
        # the resume timer now waits for this pause's end
        await eventually(
            lambda: gw.feature(TakeoverFeature).service.next_resume_at == pause.until, what="timer"
        )
        clock.advance(599)
        assert await gw.rt.state.pauses.all() == [pause]
        clock.advance(1.5)  # no message comes: the timer resumes the chat (float time: +0.5)
        await chat.wait_sent(1)
        assert chat.sent[0].target.address == "memory:ops"
        assert chat.texts() == [ran_out_text(pause)]
        assert await gw.rt.state.pauses.all() == []
        metrics = gw.metrics_text().decode()
        assert 'chatgate_takeover_total{channel="memory",reason="auto_resume"} 1.0' in metrics
        status = await gw.status()
        assert status["chats"]["paused"] == []
        answer = await (await chat.inject("hello again")).result
        assert answer.reason == "text"
    assert 'reason="auto_resume"} 1.0' in metrics  # told once, counted once


async def test_an_operator_reply_replayed_from_the_dlq_joins_the_transcript(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with running(chat_config(tmp_path, fake_llm)) as gw:
        chat = memory(gw)
        await (await chat.inject("where is my order?")).result
        await gw.feature(TakeoverFeature).service.pause(CHAT, "cli", for_s=0)
        chat.failures.append(SendResult.failed(SendErrorKind.INVALID_REQUEST, "bad gateway day"))
        answer = await gw.feature(TakeoverFeature).service.reply(
            CHAT, "Ann here, checking.", "dashboard"
        )
        assert answer["delivered"] is False and answer["reason_code"] == "invalid_request"
        lines = await gw.rt.state.sessions.transcript(SESSION)
        assert lines is not None and [x.human for x in lines] == [None, None]  # not sent: not kept

        [dead] = await gw.rt.dead_letters.list(10)
        replayed = await gw.replay_dead_letter(dead.id)
        assert replayed["status"] == "sent"
        assert chat.texts()[-1] == "Ann here, checking."
        lines = await gw.rt.state.sessions.transcript(SESSION)
        assert lines is not None
        assert [(x.role, x.content, x.human) for x in lines][-1] == (
            "assistant",
            "Ann here, checking.",
            "dashboard",
        )
        await gw.feature(TakeoverFeature).service.resume(CHAT, "cli")
        await (await chat.inject("thanks")).result
    assert said(fake_llm.requests[-1])[-2:] == [
        ("assistant", "Ann here, checking."),
        ("user", "thanks"),
    ]


async def test_a_scheduled_run_aimed_at_a_paused_chat_is_held_not_run(tmp_path: Path) -> None:
    jobs = HOURLY.replace('prompt: "status report"', 'prompt: "status report"\n    session: chat')
    clock = ManualClock(wall_start=T0 - 10)
    async with running(schedule_config(tmp_path, jobs), clock=clock) as gw:
        chat = memory(gw)
        await gw.feature(Schedules).scheduler.tick()
        await gw.feature(TakeoverFeature).service.pause("memory:ops", "cli", for_s=0)
        clock.advance(10)
        await gw.feature(Schedules).scheduler.tick()
        await gw.pipeline.scheduler.wait_idle(5.0)
        assert chat.sent == []  # the model was not asked and nothing went out
        [entry] = await gw.rt.journal.find("memory", sender_id="job:hourly", limit=5)
        assert (entry.stage, entry.reason, entry.state.value) == ("observe", "paused", "done")
        assert trail(entry)["summary"] == (
            "scheduled run held, not run (paused: a human took over the chat)"
        )
        # the job's words are an instruction to the model, never said in the chat
        assert await gw.rt.state.sessions.transcript("default:memory:ops") in (None, [])

        await gw.feature(TakeoverFeature).service.resume(
            "memory:ops", "cli"
        )  # held runs are not made up later
        await gw.feature(Schedules).scheduler.tick()
        await gw.pipeline.scheduler.wait_idle(5.0)
        assert chat.sent == []
        clock.advance(3600)
        await gw.feature(Schedules).scheduler.tick()
        await chat.wait_sent(1)
    assert chat.texts() == ["status report"]


async def test_a_webhook_delivering_into_a_paused_chat_is_held_not_run(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("triaged")
    path = gh_config(tmp_path, fake_llm, route_extra=ASYNC_ROUTE)
    async with running(path) as gw, http() as client:
        await gw.feature(TakeoverFeature).service.pause("memory:ops-room", "cli", for_s=0)

        async def post(delivery: str) -> tuple[int, dict[str, Any]]:
            body = issue_body()
            headers = gh_headers(body, delivery=delivery)
            async with client.post(url(gw, "/hooks/gh-async"), data=body, headers=headers) as r:
                return r.status, await r.json()

        status, held = await post("a1")  # decided at once: the caller is told why
        assert (status, held["reason_code"]) == (200, "paused")
        assert await gw.pipeline.scheduler.wait_idle(5.0)
        entry = await gw.rt.journal.get("webhook:gh-async:id-a1")
        assert entry is not None and (entry.reason, entry.state.value) == ("paused", "done")
        assert trail(entry)["summary"] == (
            "held, not run: its answer goes to memory:ops-room, paused (a human took over the chat)"
        )
        assert fake_llm.requests == [] and memory(gw).sent == []
        await gw.feature(TakeoverFeature).service.resume("memory:ops-room", "cli")
        assert (await post("a2"))[0] == 202
        sent = await memory(gw).wait_sent(1)
    assert [s.text for s in sent] == ["triaged"]
