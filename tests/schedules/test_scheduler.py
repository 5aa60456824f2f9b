"""Scheduled runs through a real Gateway: the in-memory channel, the echo agent, a manual clock."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import aiohttp

from chatgate.gateway.app import Gateway
from chatgate.model.messages import Target
from chatgate.model.reasons import SendErrorKind
from chatgate.schedules.feature import Schedules
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.harness import fake_agent, http, memory, operator, running, url, write_config

HOUR = 3600.0
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()


def config(tmp_path: Path, jobs: str, *, channel: str = "{dm_policy: open}") -> Path:
    return write_config(
        tmp_path,
        f"""
agents:
  default: {{backend: echo}}
channels:
  memory: {channel}
schedules:
{jobs}
""",
    )


HOURLY = """
  hourly:
    cron: "0 * * * *"
    tz: Europe/Berlin
    prompt: "status report"
    deliver: {to: "memory:ops"}
"""


async def settle(gw: Gateway) -> None:
    """Let journaled runs finish their turns (real I/O on the loop, no clock time)."""
    await gw.pipeline.scheduler.wait_idle(5.0)


async def test_cron_job_runs_at_its_instant_and_delivers_with_a_message_id(
    tmp_path: Path,
) -> None:
    clock = ManualClock(wall_start=T0 - 10)
    async with running(config(tmp_path, HOURLY), clock=clock) as gw:
        chat = memory(gw)
        await gw.feature(Schedules).scheduler.tick()
        assert chat.sent == []
        clock.advance(10)
        await gw.feature(Schedules).scheduler.tick()
        await chat.wait_sent(1)
        await settle(gw)
        assert chat.sent[0].target == Target("memory", "ops")
        assert chat.texts() == ["status report"]
        [job] = (await gw.status())["jobs"]
        assert job["id"] == "hourly" and job["state"] == "active"
        assert job["next_at"] == T0 + HOUR
        [run] = job["last"]["runs"]
        assert run["outcome"] == "delivered" and run["delivery_ids"]
        assert job["last"]["reason"] == "due"
        # Ticking again at the same instant runs nothing more.
        await gw.feature(Schedules).scheduler.tick()
        await settle(gw)
        assert len(chat.sent) == 1


async def test_downtime_then_misfire_policy_decides_the_backlog(tmp_path: Path) -> None:
    jobs = HOURLY.replace(
        'prompt: "status report"', 'prompt: "status report"\n    misfire: run_all'
    )
    clock = ManualClock(wall_start=T0 - 10)
    path = config(tmp_path, jobs)
    async with running(path, clock=clock) as gw:
        await gw.feature(Schedules).scheduler.tick()  # first sight: the cursor starts now
    clock.advance(3.5 * HOUR)  # 10:00, 11:00, 12:00 missed (and 09:00)
    async with running(path, clock=clock) as gw:
        chat = memory(gw)
        await gw.feature(Schedules).scheduler.tick()
        await chat.wait_sent(4)
        await settle(gw)
        history = await gw.feature(Schedules).scheduler.store.runs("hourly", 10)
    assert sorted(r.instant for r in history) == [T0 + k * HOUR for k in range(4)]
    assert {r.reason for r in history} == {"catch_up"}


async def test_skip_policy_records_the_skipped_count(tmp_path: Path) -> None:
    jobs = HOURLY.replace('prompt: "status report"', 'prompt: "status report"\n    misfire: skip')
    clock = ManualClock(wall_start=T0 - 10)
    path = config(tmp_path, jobs)
    async with running(path, clock=clock) as gw:
        await gw.feature(Schedules).scheduler.tick()
        clock.advance(3.5 * HOUR)
        await gw.feature(Schedules).scheduler.tick()
        await settle(gw)
        assert memory(gw).sent == []
        [skipped] = await gw.feature(Schedules).scheduler.store.runs("hourly", 10)
    assert (skipped.reason, skipped.count, skipped.instant) == ("misfire_skipped", 4, T0 + 3 * HOUR)


async def test_runtime_jobs_over_the_api_survive_a_restart(tmp_path: Path) -> None:
    clock = ManualClock(wall_start=T0)
    path = config(tmp_path, "  {}\n")
    body = {"id": "nag", "every_s": 600, "prompt": "drink water", "deliver": {"to": "memory:u1"}}
    async with running(path, clock=clock) as gw, http() as client:
        headers = operator(gw)
        async with client.post(url(gw, "/api/jobs"), json=body, headers=headers) as resp:
            assert resp.status == 201, await resp.text()
        async with client.post(url(gw, "/api/jobs"), json=body, headers=headers) as resp:
            assert resp.status == 409
        bad = {**body, "id": "x", "cron": "61 * * * *"}
        async with client.post(url(gw, "/api/jobs"), json=bad, headers=headers) as resp:
            assert resp.status == 400
            assert (await resp.json())["error"].startswith("cron: '61 * * * *' is not a cron")
        async with client.post(url(gw, "/api/jobs"), json=body) as resp:
            assert resp.status == 401  # changing jobs needs the token
    clock.advance(600)
    async with running(path, clock=clock) as gw, http() as client:
        chat = memory(gw)
        await gw.feature(Schedules).scheduler.tick()
        await chat.wait_sent(1)
        await settle(gw)
        assert chat.texts("u1") == ["drink water"]
        headers = operator(gw)
        async with client.get(url(gw, "/api/jobs/nag/history"), headers=headers) as resp:
            data = await resp.json()
        assert [h["reason"] for h in data["history"]] == ["due"]
        assert data["history"][0]["runs"][0]["outcome"] == "delivered"
        async with client.post(url(gw, "/api/jobs/nag/pause"), headers=headers) as resp:
            assert (await resp.json())["job"]["state"] == "paused"
        clock.advance(600)
        await gw.feature(Schedules).scheduler.tick()
        await settle(gw)
        assert len(chat.sent) == 1
        async with client.post(url(gw, "/api/jobs/nag/run"), headers=headers) as resp:
            ran = await resp.json()
        assert ran["run"]["reason"] == "run_now"
        await chat.wait_sent(2)
        async with client.delete(url(gw, "/api/jobs/nag"), headers=headers) as resp:
            assert (await resp.json())["removed"] is True
        async with client.get(url(gw, "/api/jobs"), headers=headers) as resp:
            assert (await resp.json())["jobs"] == []


async def test_job_to_a_dead_target_is_not_run_and_says_why(tmp_path: Path) -> None:
    clock = ManualClock(wall_start=T0 - 10)
    async with running(config(tmp_path, HOURLY), clock=clock) as gw:
        target = Target("memory", "ops")
        await gw.rt.dead_targets.mark(target, SendErrorKind.FORBIDDEN, "blocked", clock.time())
        clock.advance(10)
        await gw.feature(Schedules).scheduler.tick()
        await settle(gw)
        assert gw.rt.metrics.dlq_size._value.get() == 0  # nothing was answered to be lost
        assert memory(gw).sent == []
        assert await gw.rt.dead_targets.kind(target) is not None  # not revived by the run
        [job] = (await gw.status())["jobs"]
        assert job["last"]["reason"] == "target_dead" and job["last"]["runs"] == []
        assert job["problems"] == ["target_dead: memory:ops"]


async def test_chat_session_job_queues_behind_a_busy_turn_and_lands_in_context(
    tmp_path: Path,
) -> None:
    jobs = HOURLY.replace("memory:ops", "memory:c1").replace(
        'prompt: "status report"', 'prompt: "status report"\n    session: chat'
    )
    clock = ManualClock(wall_start=T0 - 10)
    async with running(config(tmp_path, jobs), clock=clock) as gw:
        chat = memory(gw)
        first = await chat.inject("hello", chat_id="c1")
        clock.advance(10)
        await gw.feature(Schedules).scheduler.tick()
        await asyncio.wait_for(first.result, 5)
        await chat.wait_sent(2)
        await settle(gw)
        assert chat.texts("c1") == ["hello", "status report"]
        session = await gw.rt.state.sessions.load("default:memory:c1", 10)
    assert [m.content for m in session.messages if m.role == "user"] == ["hello", "status report"]


async def test_unknown_target_channel_is_a_config_error(tmp_path: Path) -> None:
    from chatgate.config.errors import ConfigError
    from tests.harness import load

    path = config(tmp_path, HOURLY.replace("memory:ops", "slack:C1"))
    try:
        load(path)
    except ConfigError as exc:
        assert "schedules.hourly.deliver.to" in str(exc) and "slack" in str(exc)
    else:
        raise AssertionError("config accepted")


async def test_api_needs_a_known_job(tmp_path: Path) -> None:
    async with running(config(tmp_path, HOURLY)) as gw, http() as client:
        async with client.get(url(gw, "/api/jobs/nope"), headers=operator(gw)) as resp:
            assert resp.status == 404
        async with client.delete(url(gw, "/api/jobs/hourly"), headers=operator(gw)) as resp:
            assert resp.status == 409  # a config job is removed in the file
        async with client.get(url(gw, "/api/jobs"), headers=operator(gw)) as resp:
            assert isinstance(resp, aiohttp.ClientResponse)
            assert [j["id"] for j in (await resp.json())["jobs"]] == ["hourly"]


async def test_status_and_doctor_name_a_job_to_a_dead_target(tmp_path: Path) -> None:
    from chatgate.cli.doctor_cmd import _jobs
    from chatgate.cli.status_cmd import render
    from tests.harness import load

    async with running(config(tmp_path, HOURLY)) as gw:
        now = gw.rt.clock.time()
        await gw.rt.dead_targets.mark(Target("memory", "ops"), SendErrorKind.FORBIDDEN, "x", now)
        text = render(await gw.status())
        cli = tmp_path / "cli.yaml"
        cli.write_text(f"config_version: 1\ngateway:\n  state_dir: {tmp_path / 'state'}\n")
        findings = await asyncio.to_thread(_jobs, load(cli))
    assert "jobs: 1" in text and "hourly  [active]  cron '0 * * * *' Europe/Berlin" in text
    assert "! target_dead: memory:ops" in text
    assert [(f.check, f.detail) for f in findings] == [
        ("schedules.hourly", "job hourly: target_dead: memory:ops")
    ]


async def test_users_see_and_remove_only_their_own_jobs(tmp_path: Path) -> None:
    async with running(config(tmp_path, HOURLY), clock=ManualClock(wall_start=T0)) as gw:
        body = {"every_s": 3600, "prompt": "stretch", "deliver": {"to": "memory:u1"}}
        async with http() as client:
            for job_id, owner in (("mine", "memory:u1"), ("theirs", "memory:u2")):
                payload = {"id": job_id, "owner": owner, **body}
                async with client.post(
                    url(gw, "/api/jobs"), json=payload, headers=operator(gw)
                ) as resp:
                    assert resp.status == 201
        chat = memory(gw)

        async def say(text: str, sender: str = "u1") -> str:
            result = await (await chat.inject(text, sender_id=sender, chat_id=sender)).result
            assert result.reply is not None
            return result.reply

        listed = await say("/jobs")
        assert "mine: every 3600s" in listed and "theirs" not in listed and "hourly" not in listed
        assert await say("/jobs rm theirs") == "You have no job called theirs."
        assert await say("/jobs rm hourly") == "You have no job called hourly."
        assert await say("/jobs rm mine") == "Removed mine."
        assert await say("/jobs") == "You have no scheduled jobs."
        assert "theirs" in await say("/jobs", sender="u2")
        assert [j.id for j in gw.feature(Schedules).scheduler.jobs()] == [
            "hourly",
            "theirs",
        ]  # the operator sees all


async def test_one_shot_runs_once_and_reload_reconciles_config_jobs(tmp_path: Path) -> None:
    clock = ManualClock(wall_start=T0)
    path = config(tmp_path, HOURLY)
    async with running(path, clock=clock) as gw:
        at = datetime.fromtimestamp(T0 + 90, ZoneInfo("UTC")).isoformat()
        body = {"at": at, "prompt": "once", "deliver": {"to": "memory:ops"}}
        job = await gw.feature(Schedules).scheduler.add("reminder", body)
        assert gw.feature(Schedules).scheduler.next_at(job.id) == T0 + 90
        past = {**body, "at": datetime.fromtimestamp(T0 - 1, ZoneInfo("UTC")).isoformat()}
        try:
            await gw.feature(Schedules).scheduler.add("late", past)
        except ValueError as exc:
            assert "in the past" in str(exc)
        else:
            raise AssertionError("a one-shot in the past was accepted")
        clock.advance(90)
        await gw.feature(Schedules).scheduler.tick()
        clock.advance(3 * HOUR)
        await gw.feature(Schedules).scheduler.tick()
        await settle(gw)
        assert memory(gw).texts().count("once") == 1
        views = {j["id"]: j for j in (await gw.status())["jobs"]}
        assert views["reminder"]["state"] == "finished"
        path.write_text(path.read_text().replace("hourly:", "nightly:"))
        assert (await gw.reload())["ok"]
        assert [j.id for j in gw.feature(Schedules).scheduler.jobs()] == ["nightly", "reminder"]


async def test_a_run_journaled_before_its_job_was_removed_keeps_its_hint(tmp_path: Path) -> None:
    from chatgate.policies.schedules import ScheduleReason
    from chatgate.schedules.runner import run_message

    async with running(config(tmp_path, "  {}\n"), clock=ManualClock(wall_start=T0)) as gw:
        body = {"every_s": 60, "prompt": "p", "session": "none", "deliver": {"to": "memory:u1"}}
        job = await gw.feature(Schedules).scheduler.add("gone", body)
        msg = run_message(job, job.targets[0], 0, "1", T0, ScheduleReason.DUE, T0)
        await gw.feature(Schedules).scheduler.remove("gone")
        hint = gw.pipeline.hint(msg)
        forged = gw.pipeline.hint(replace(msg, platform="memory"))
    assert (hint.trusted, hint.agent, hint.ephemeral) == (True, "default", True)
    assert not forged.trusted  # only the scheduler's own runs are trusted


async def test_a_run_for_a_chat_marked_dead_calls_no_model_and_says_why(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    path = write_config(
        tmp_path,
        f"""
{fake_agent(fake_llm, "sk-dead-chat", 10)}
channels:
  memory: {{dm_policy: open}}
schedules:
{HOURLY}""",
    )
    clock = ManualClock(wall_start=T0 - 10)
    async with running(path, clock=clock) as gw:
        scheduler = gw.feature(Schedules).scheduler
        await scheduler.tick()
        await gw.rt.dead_targets.mark(
            Target("memory", "ops"), SendErrorKind.FORBIDDEN, "bot was blocked", clock.time()
        )
        clock.advance(10)
        await scheduler.tick()
        await settle(gw)
        [run] = await scheduler.store.runs("hourly", 10)
        dead_letters = await gw.rt.dead_letters.list()
    assert fake_llm.requests == [] and dead_letters == []
    assert (run.reason, run.instant, run.keys) == ("target_dead", T0, [])
