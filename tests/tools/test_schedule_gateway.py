"""The schedule tools through a real Gateway: the fake model asks for a job, the job is stored
(owned by the user, listed by /jobs and /api/jobs), the manual clock fires it, and the run's
answer reaches the chat through the normal path; list, cancel and the per-chat bound; a webhook's
agent (no chat of its own) only to a configured target."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from chatgate.channels.signatures import sign
from chatgate.gateway.app import Gateway
from chatgate.schedules.feature import Schedules
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.harness import fake_agent, http, memory, operator, running, url, write_config

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()


def config(tmp_path: Path, llm: FakeLLM, schedule: str) -> Path:
    return write_config(
        tmp_path,
        f"""
{fake_agent(llm, "sk-schedule-test", 30)}
    tools:
      allow: [gateway.*]
      schedule: {schedule}
channels:
  memory: {{dm_policy: open}}
""",
    )


def tool_results(llm: FakeLLM) -> list[str]:
    """The tool results the model was last sent (each request carries the earlier ones)."""
    return [m["content"] for m in llm.requests[-1].messages if m["role"] == "tool"]


async def ask(gw: Gateway, text: str) -> None:
    submission = await memory(gw).inject(text, chat_id="c1", sender_id="u1")
    await asyncio.wait_for(submission.result, 30)


async def test_agent_schedules_a_reminder_that_fires_into_the_chat(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    clock = ManualClock(wall_start=T0)
    remind = {"prompt": "Remind the user to call Bob", "delay_s": 3600}
    fake_llm.script(
        ToolCalls.of(ToolCall("gateway__schedule", remind)),
        "I will remind you at 10.",
        ToolCalls.of(ToolCall("gateway__schedule", {"prompt": "again", "delay_s": 60})),
        "Time to call Bob!",
    )
    path = config(tmp_path, fake_llm, "{tz: Europe/Berlin}")
    async with running(path, clock=clock) as gw, http() as client:
        chat = memory(gw)
        await ask(gw, "remind me in an hour to call Bob")
        first = fake_llm.requests[0].body["tools"]
        names = [t["function"]["name"] for t in first]
        assert names == ["gateway__schedule", "gateway__list_jobs", "gateway__cancel_job"]
        assert "Now is 2026-06-01T09:00+02:00" in first[0]["function"]["description"]
        [result] = tool_results(fake_llm)
        [job] = gw.feature(Schedules).scheduler.jobs()
        assert result.startswith(f"scheduled {job.id}: at 2026-06-01T10:00:00+02:00")
        assert (job.source, job.owner, job.spec.agent) == ("chat", "memory:u1", "default")
        assert (job.spec.deliver.to, job.spec.session) == (["memory:c1"], "chat")
        assert chat.texts("c1") == ["I will remind you at 10."]

        await ask(gw, "/jobs")  # the user sees it and could remove it
        assert job.id in chat.texts("c1")[-1]
        async with client.get(url(gw, "/api/jobs"), headers=operator(gw)) as resp:
            listed = (await resp.json())["jobs"]  # what `chatgate jobs list` prints
        assert [(j["id"], j["source"], j["owner"]) for j in listed] == [
            (job.id, "chat", "memory:u1")
        ]

        clock.advance(3600)
        await gw.feature(Schedules).scheduler.tick()
        await chat.wait_sent(3)
        await gw.pipeline.scheduler.wait_idle(5.0)
        assert chat.texts("c1")[-1] == "Time to call Bob!"
        run = fake_llm.requests[-1]
        assert run.last_user_text == "Remind the user to call Bob"
        contents = [m.get("content") for m in run.messages]
        assert "remind me in an hour to call Bob" in contents  # the run sees the conversation
        assert tool_results(fake_llm)[-1] == "error: a scheduled run cannot schedule more jobs"
        assert [j.id for j in gw.feature(Schedules).scheduler.jobs()] == [job.id]
        [line] = (await gw.status())["jobs"]
        assert line["last"]["runs"][0]["outcome"] == "delivered"
        assert line["state"] == "finished"


async def test_agent_lists_and_cancels_its_chat_jobs_within_the_bound(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    clock = ManualClock(wall_start=T0)
    daily = {"prompt": "Say good morning", "cron": "0 8 * * *"}
    fake_llm.script(
        ToolCalls.of(ToolCall("gateway__schedule", daily)),
        ToolCalls.of(ToolCall("gateway__schedule", {"prompt": "one more", "delay_s": 60})),
        ToolCalls.of(ToolCall("gateway__cancel_job", {"id": "chat-nope"})),
        "Done.",
    )
    path = config(tmp_path, fake_llm, "{max_jobs: 1, tz: Europe/Berlin}")
    async with running(path, clock=clock) as gw:
        await ask(gw, "greet me every morning")
        [job] = gw.feature(Schedules).scheduler.jobs()
        scheduled, refused, unknown = tool_results(fake_llm)
        assert scheduled.startswith(f"scheduled {job.id}: cron '0 8 * * *' Europe/Berlin")
        assert "next run 2026-06-02T08:00+02:00" in scheduled
        assert refused.startswith("error: this chat has 1 jobs already")
        assert unknown == f"error: no job 'chat-nope' in this chat (jobs: {job.id})"

        fake_llm.reset()
        fake_llm.script(
            ToolCalls.of(ToolCall("gateway__list_jobs")),
            ToolCalls.of(ToolCall("gateway__cancel_job", {"id": job.id})),
            "Cancelled.",
        )
        await ask(gw, "stop the morning greetings")
        listing, cancelled = tool_results(fake_llm)[-2:]
        assert listing.startswith(f"{job.id}: cron '0 8 * * *' Europe/Berlin, next 2026-06-02")
        assert listing.endswith(": Say good morning")
        assert cancelled == f"cancelled {job.id}"
        assert gw.feature(Schedules).scheduler.jobs() == []
        assert await gw.feature(Schedules).scheduler.store.jobs() == []


async def test_webhook_agent_schedules_only_for_a_configured_target(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    secret = "whsec-schedule-test"
    path = write_config(
        tmp_path,
        f"""
{fake_agent(fake_llm, "sk-schedule-test", 30)}
    tools:
      allow: [gateway.schedule]
      schedule: {{targets: {{ops: "memory:ops-room"}}}}
channels:
  memory: {{dm_policy: open}}
  webhook:
    routes:
      ci:
        path: /hooks/ci
        secret: {secret}
        signature: github
        prompt: "CI failed: {{payload.run}}"
""",
    )
    follow_up = {"prompt": "Check whether run 7 is green now", "delay_s": 1800}
    fake_llm.script(
        ToolCalls.of(ToolCall("gateway__schedule", follow_up)),  # no chat of its own
        ToolCalls.of(ToolCall("gateway__schedule", {**follow_up, "target": "ops"})),
        "Will check again in 30 minutes.",
        "Run 7 is green.",
    )
    clock = ManualClock(wall_start=time.time())
    body = json.dumps({"run": 7}).encode()
    headers = {"X-GitHub-Event": "check_run", "X-GitHub-Delivery": "d-sched-1"}
    headers.update(sign("github", secret, body, time.time()))
    async with running(path, clock=clock) as gw, http() as client:
        async with client.post(url(gw, "/hooks/ci"), data=body, headers=headers) as resp:
            assert resp.status == 200
            assert (await resp.json())["reply"] == "Will check again in 30 minutes."
        nowhere, scheduled = tool_results(fake_llm)
        assert nowhere.startswith("error: this conversation has no chat to deliver to")
        [job] = gw.feature(Schedules).scheduler.jobs()
        assert scheduled.startswith(f"scheduled {job.id}: at ")
        assert job.spec.deliver.to == ["memory:ops-room"]
        clock.advance(1801)  # past the instant (a datetime keeps whole microseconds only)
        await gw.feature(Schedules).scheduler.tick()
        chat = memory(gw)
        await chat.wait_sent(1)
        assert chat.texts("ops-room") == ["Run 7 is green."]
