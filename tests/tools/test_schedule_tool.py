"""The schedule tool's argument checks (pure): what becomes a job, what goes back as an error."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from chatgate.agents.tools.schedule import JobRequest, parse_request, schedule_specs
from chatgate.agents.tools.types import ToolContext
from chatgate.config.tool_models import (
    CANCEL_JOB,
    LIST_JOBS,
    SCHEDULE,
    AgentToolsConfig,
    ScheduleToolConfig,
)

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=BERLIN).timestamp()
CTX = ToolContext("llm", "telegram", "42", "telegram:42")
CONFIG = ScheduleToolConfig(tz="Europe/Berlin", min_interval_s=3600, targets={"ops": "slack:C1"})


def at(hour: int, day: int = 2) -> datetime:
    return datetime(2026, 6, day, hour, 0, tzinfo=BERLIN)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"prompt": "call Bob", "at": "2026-06-02T09:00:00+02:00"}, at(9)),
        ({"prompt": "call Bob", "at": "2026-06-02T09:00"}, at(9)),  # no offset: the agent's tz
        ({"prompt": " call Bob ", "delay_s": 3600}, at(13, day=1)),
    ],
)
def test_one_shot_jobs(arguments: dict[str, Any], expected: datetime) -> None:
    request = parse_request(arguments, CTX, CONFIG, NOW)
    assert isinstance(request, JobRequest)
    assert (request.prompt, request.to, request.cron) == ("call Bob", "telegram:42", None)
    assert request.at is not None and request.at.timestamp() == expected.timestamp()


def test_cron_job_in_a_zone_and_a_named_target() -> None:
    arguments = {"prompt": "standup", "cron": "0 9 * * 1-5", "tz": "UTC", "target": "ops"}
    request = parse_request(arguments, CTX, CONFIG, NOW)
    assert request == JobRequest("standup", "slack:C1", "UTC", cron="0 9 * * 1-5")


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"at": "2026-06-02T09:00:00+02:00"}, "prompt must be a non-empty string"),
        ({"prompt": "x" * 1001, "delay_s": 60}, "longer than 1000"),
        ({"prompt": "p"}, "exactly one of at, delay_s or cron"),
        ({"prompt": "p", "delay_s": 60, "cron": "0 9 * * *"}, "exactly one of"),
        ({"prompt": "p", "at": "tomorrow at 9"}, "ISO 8601"),
        ({"prompt": "p", "at": "2026-06-01T11:00:00+02:00"}, "not in the future (now is 2026-06"),
        ({"prompt": "p", "at": "2028-06-01T11:00:00+02:00"}, "more than 366 days ahead"),
        ({"prompt": "p", "delay_s": -5}, "delay_s must be a positive number"),
        ({"prompt": "p", "delay_s": True}, "delay_s must be a positive number"),
        ({"prompt": "p", "cron": "61 * * * *"}, "is not minute hour day month weekday"),
        ({"prompt": "p", "cron": "*/5 * * * *"}, "runs every 300 s at times; the least"),
        ({"prompt": "p", "cron": "0,30 9 * * *"}, "runs every 1800 s"),  # one short gap is enough
        ({"prompt": "p", "delay_s": 60, "tz": "Mars/Base"}, "is not a time zone name"),
        ({"prompt": "p", "delay_s": 60, "target": "telegram:99"}, "target must be one of ['ops']"),
    ],
)
def test_mistakes_go_back_to_the_model(arguments: dict[str, Any], error: str) -> None:
    result = parse_request(arguments, CTX, CONFIG, NOW)
    assert isinstance(result, str) and result.startswith("error: ") and error in result


def test_only_the_own_chat_without_targets_and_none_without_a_chat() -> None:
    bare = ScheduleToolConfig()
    foreign = parse_request({"prompt": "p", "delay_s": 60, "target": "x"}, CTX, bare, NOW)
    assert foreign == "error: jobs can only be scheduled for this chat; omit target"
    webhook = ToolContext("llm", "webhook", "gh", "")
    nowhere = parse_request({"prompt": "p", "delay_s": 60}, webhook, bare, NOW)
    assert isinstance(nowhere, str) and "no chat to deliver to" in nowhere


def test_specs_tell_the_model_the_time_and_the_bounds() -> None:
    schedule, listing, cancel = schedule_specs(CONFIG, NOW)
    assert [schedule.name, listing.name, cancel.name] == [SCHEDULE, LIST_JOBS, CANCEL_JOB]
    assert "Now is 2026-06-01T12:00+02:00" in schedule.description
    assert "At most 5 jobs per chat" in schedule.description
    assert schedule.parameters["properties"]["target"]["enum"] == ["ops"]


def test_config_switch() -> None:
    assert AgentToolsConfig.model_validate({"schedule": True}).schedule == ScheduleToolConfig()
    assert AgentToolsConfig.model_validate({"schedule": False}).schedule is None
    with pytest.raises(ValueError, match="min_interval_s"):
        AgentToolsConfig.model_validate({"schedule": {"min_interval_s": 5}})
    with pytest.raises(ValueError, match="not a time zone name"):
        AgentToolsConfig.model_validate({"schedule": {"tz": "Mars/Base"}})


async def test_only_allowed_schedule_tools_are_offered_and_only_bound_to_a_turn() -> None:
    from chatgate.agents.mcp.hub import McpHub
    from tests.fakes.clock import ManualClock

    hub = McpHub({}, ManualClock(wall_start=NOW))
    config = AgentToolsConfig.model_validate({"allow": ["gateway.schedule"], "schedule": True})
    tools = hub.source_for("llm", config)
    assert await tools.tools() == []  # no turn, no chat: nothing to schedule for
    bound = tools.bound(CTX)
    assert [s.name for s in await bound.tools()] == [SCHEDULE]
    refused = await bound.call(LIST_JOBS, {})
    assert refused.is_error and "no built-in tool" in refused.text
    unwired = await bound.call(SCHEDULE, {"prompt": "p", "delay_s": 60})
    assert unwired.is_error and unwired.text == "error: scheduling is not available here"
    off = hub.source_for("llm", AgentToolsConfig.model_validate({"allow": ["gateway.*"]}))
    assert off.bound(CTX) is off and await off.bound(CTX).tools() == []
