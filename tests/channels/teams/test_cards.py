"""Adaptive Cards end to end: buttons as `Action.Submit` whose press comes back as the choice,
and tool approvals answered with Approve/Deny only by the asker."""

from __future__ import annotations

from pathlib import Path

from tests.channels.teams.support import CHANNEL, endpoint, teams_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.fakes.teams import FakeTeams
from tests.harness import running
from tests.tools.conftest import SERVERS
from tests.tools.test_approvals_chat import ASK_ADD, TIMEOUT

GROUP = "19:group-chat@thread.v2"


async def test_buttons_are_a_card_whose_press_is_the_next_turn(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    async with running(teams_config(tmp_path, ms, fake_llm, agent="menu")) as gw:
        await ms.post(endpoint(gw), ms.message("pick", activity_id="2001"))
        [offer] = await ms.wait_sent(1)
        card = offer.card
        assert card is not None
        red, blue = card["actions"]
        press = ms.message("", activity_id="2002", value=red["data"], reply_to=offer.id)
        assert (await ms.post(endpoint(gw), press))[0] == 200
        [_, answer] = await ms.wait_sent(2)
        await settled(gw, "teams:a%3A1personal-chat/2002")
    assert card["body"][0] == {"type": "TextBlock", "text": "Which **colour**?", "wrap": True}
    assert (red["type"], red["title"], blue["title"]) == ("Action.Submit", "Red", "Blue")
    assert red["data"] == {"chatgate_choice": "red"}
    assert answer.text == "you chose red"


async def test_an_approval_card_is_answered_only_by_the_asker(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    agents = ASK_ADD
    config = teams_config(tmp_path, ms, fake_llm, channel="", head=SERVERS)
    config.write_text(config.read_text().replace("timeout_s: 10\n", "timeout_s: 60\n" + agents, 1))
    fake_llm.script(ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3})), "It is 5.")
    thread = f"{CHANNEL};messageid=7000"
    async with running(config) as gw:
        ask = ms.message(
            "what is 2+3?", conversation=thread, kind="channel", activity_id="7000", mention=True
        )
        await ms.post(endpoint(gw), ask)
        [prompt] = await ms.wait_sent(1, timeout=TIMEOUT)
        card = prompt.card
        assert card is not None and "fake.add" in card["body"][0]["text"]
        approve, deny = card["actions"]
        assert (approve["title"], deny["title"]) == ("Approve", "Deny")

        stranger = ms.message(
            "",
            user="aad-stranger",
            conversation=thread,
            kind="channel",
            activity_id="7001",
            value=approve["data"],
            reply_to=prompt.id,
        )
        assert (await ms.post(endpoint(gw), stranger))[0] == 200
        other = await settled(gw, f"teams:{CHANNEL.replace(':', '%3A')}/7001", TIMEOUT)
        assert (other.stage, other.reason) == ("approval", "approval_not_approver")
        [notice] = ms.targeted()
        assert notice.activity["recipient"]["id"] == "29:aad-stranger"
        assert notice.text == "Only the person who asked can answer this."
        assert len(fake_llm.requests) == 1, "a stranger's press resumed the turn"

        asker = ms.message(
            "",
            conversation=thread,
            kind="channel",
            activity_id="7002",
            value=approve["data"],
            reply_to=prompt.id,
        )
        await ms.post(endpoint(gw), asker)
        entry = await settled(gw, f"teams:{CHANNEL.replace(':', '%3A')}/7002", TIMEOUT)
        # the card, its approval note, the tool status line, then the answer (its edit): waited
        # for here, not left to the stop's drain (which a loaded machine outlasts)
        done = await ms.wait_sent(4, timeout=TIMEOUT)
    assert (entry.stage, entry.reason) == ("approval", "approved")
    assert fake_llm.requests[1].messages[-1]["content"] == "5"
    assert all(s.conversation == thread for s in done)
    assert done[-1].text == "It is 5."
