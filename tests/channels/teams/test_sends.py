"""Sends through the Bot Connector: proactive sends need a conversation reference saved from
an inbound activity (without one: the DLQ with the fix), 429 waits for Retry-After, 404 ends that
conversation only, 401 (the token) and 403 (the app not installed) park the channel with the fix,
a refused app password never starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from chatgate.channels.teams import errors
from chatgate.model.messages import Target
from chatgate.model.outbound import OutboundMessage
from tests.channels.teams.support import endpoint, teams_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.teams import APP_PASSWORD, FakeTeams, Fault
from tests.harness import channel_status, eventually_channel_state, running
from tests.support.spans import Spans, failed, retries
from tests.support.waiting import eventually

CHAT = "a%3A1personal-chat"


async def test_a_proactive_send_waits_in_the_dlq_until_the_user_writes(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        report = await gw.rt.delivery.deliver(
            Target("teams", CHAT), OutboundMessage.from_text("your weekly digest")
        )
        [letter] = await gw.rt.dead_letters.list()
        shown = channel_status(gw, "teams")["last_error"]
        assert ms.messages() == []
        await ms.post(endpoint(gw), ms.message("hi", activity_id="3001"))
        await ms.wait_sent(1)
        replayed = await gw.replay_dead_letter(letter.id)
        sent = await ms.wait_sent(2)
    assert report.status == "undelivered" and report.kind == "no_reference"
    assert letter.kind == "no_reference" and "message the bot once" in letter.error
    assert shown["hint"] == errors.NO_REFERENCE_HINT
    assert replayed["status"] == "sent"
    assert [s.text for s in sent] == ["echo: hi", "your weekly digest"]
    assert {s.conversation for s in sent} == {"a:1personal-chat"}


async def test_a_reference_outlives_a_restart(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    config = teams_config(tmp_path, ms, fake_llm)
    async with running(config) as gw:
        await ms.post(endpoint(gw), ms.message("hi", activity_id="3101"))
        await ms.wait_sent(1)
    async with running(config) as gw:
        report = await gw.rt.delivery.deliver(
            Target("teams", CHAT), OutboundMessage.from_text("scheduled reminder")
        )
        [_, sent] = await ms.wait_sent(2)
    assert report.status == "sent" and sent.text == "scheduled reminder"


async def test_429_waits_for_retry_after_then_delivers_once(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    clock = ManualClock()
    async with running(teams_config(tmp_path, ms, fake_llm), clock=clock) as gw:
        ms.fail(Fault(429, retry_after=7.0))
        await ms.post(endpoint(gw), ms.message("quick", activity_id="3201"))
        await ms.wait_refused(1)
        waits = await eventually(
            lambda: [s for s in clock.pending() if 7.0 <= s < 10.0], timeout=20
        )
        assert ms.messages() == []
        clock.advance(max(waits))
        [sent] = await ms.wait_sent(1)
        entry = await settled(gw, f"teams:{CHAT}/3201")
        await asyncio.sleep(0)
    assert sent.text == "echo: quick" and entry.delivery == "sent"
    assert len(ms.messages()) == 1


async def test_5xx_is_retried(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM, spans: Spans
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        ms.fail(Fault(502))
        await ms.post(endpoint(gw), ms.message("again", activity_id="3301"))
        [sent] = await ms.wait_sent(1)
        entry = await settled(gw, f"teams:{CHAT}/3301")
    assert sent.text == "echo: again" and entry.delivery == "sent"
    # traced: one client span per Bot Connector call under the turn, the retry an event on it
    first, second = spans.deliveries("teams sendToConversation")
    assert failed(first) and not failed(second)
    turn = spans.turn_of(second)
    assert retries(turn) == ["transient"] and not failed(turn)


async def test_404_ends_that_conversation_only(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM, spans: Spans
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        ms.fail(Fault(404))
        await ms.post(endpoint(gw), ms.message("one", activity_id="3401"))
        first = await settled(gw, f"teams:{CHAT}/3401")
        other = ms.message("two", conversation="a:1second-chat", activity_id="3402")
        await ms.post(endpoint(gw), other)
        [sent] = await ms.wait_sent(1)
        status = channel_status(gw, "teams")
        dead = {d.target.chat_id for d in await gw.rt.dead_letters.list()}
    assert first.delivery == "dead_target"
    assert sent.conversation == "a:1second-chat"
    assert status["state"] == "running"
    assert status["last_error"]["hint"] == errors.GONE_HINT
    assert dead == {CHAT}
    # traced: the refused call is an error span, the dead letter marks its turn failed; the
    # other conversation's reply is a span of its own trace, delivered
    refused, delivered = spans.deliveries("teams sendToConversation")
    assert failed(refused) and failed(spans.turn_of(refused))
    assert not failed(delivered) and not failed(spans.turn_of(delivered))
    assert spans.trace_id(refused) != spans.trace_id(delivered)


async def test_403_from_the_connector_parks_the_channel_with_the_install_fix(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        ms.fail(Fault(403))
        await ms.post(endpoint(gw), ms.message("anyone?", activity_id="3451"))
        parked = await eventually_channel_state(gw, "teams", "parked")
        entry = await settled(gw, f"teams:{CHAT}/3451")
        dead = await gw.rt.dead_letters.list()
    assert parked["hint"] == errors.FORBIDDEN_HINT and "403" in parked["error"]
    assert entry.delivery == "undelivered"  # waits for the operator, not a dead target
    assert all(d.kind != "dead_target" for d in dead)
    assert APP_PASSWORD not in str(parked)


async def test_401_from_the_connector_parks_the_channel(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm)) as gw:
        ms.revoke_tokens()
        await ms.post(endpoint(gw), ms.message("anyone?", activity_id="3501"))
        parked = await eventually_channel_state(gw, "teams", "parked")
        entry = await settled(gw, f"teams:{CHAT}/3501")
    assert parked["hint"] == errors.PASSWORD_HINT
    assert entry.delivery == "undelivered"
    assert APP_PASSWORD not in str(parked)


async def test_a_wrong_app_password_parks_at_start_without_showing_it(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    wrong = "not-the-secret-0123456789"
    async with running(teams_config(tmp_path, ms, fake_llm, password=wrong)) as gw:
        parked = await eventually_channel_state(gw, "teams", "parked")
    assert parked["hint"] == errors.PASSWORD_HINT
    assert "401" in parked["error"]
    assert wrong not in str(parked) and APP_PASSWORD not in str(parked)
