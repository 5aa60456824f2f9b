"""Adaptive Cards end to end: buttons as `Action.Submit` whose press comes back as the choice,
and tool approvals answered with Approve/Deny only by the asker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chatgate.channels.teams.cards import CARD_TTL_S, CardMemory
from chatgate.channels.teams.render import CARD_TYPE, card_activity
from chatgate.state.sqlite import build_stores
from tests.channels.teams.support import CHANNEL, endpoint, teams_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.fakes.teams import FakeTeams
from tests.harness import load, running, write_config
from tests.tools.conftest import SERVERS
from tests.tools.test_approvals_chat import ASK_ADD, TIMEOUT

GROUP = "19:group-chat@thread.v2"
THREAD = f"{CHANNEL};messageid=8000"
KEY = f"teams:{CHANNEL.replace(':', '%3A')}"


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
        await ms.wait_sent(2, timeout=TIMEOUT)
        entry = await settled(gw, f"teams:{CHANNEL.replace(':', '%3A')}/7002")
        done = await ms.wait_text("It is 5.", timeout=TIMEOUT)
    assert (entry.stage, entry.reason) == ("approval", "approved")
    assert fake_llm.requests[1].messages[-1]["content"] == "5"
    assert all(s.conversation == thread for s in done)


async def test_an_answered_approval_card_shows_the_decision_without_buttons(
    tmp_path: Path, fake_teams: FakeTeams, fake_llm: FakeLLM
) -> None:
    ms = fake_teams
    config = teams_config(tmp_path, ms, fake_llm, channel="", head=SERVERS)
    config.write_text(config.read_text().replace("timeout_s: 10\n", "timeout_s: 60\n" + ASK_ADD, 1))
    fake_llm.script(
        ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3})),
        ToolCalls.of(ToolCall("fake__add", {"a": 4, "b": 4})),
        "Done.",
    )
    async with running(config) as gw:
        ask = ms.message(
            "add twice", conversation=THREAD, kind="channel", activity_id="8000", mention=True
        )
        await ms.post(endpoint(gw), ask)
        decided: list[dict[str, Any]] = []
        for press, mid in ((0, "8001"), (1, "8002")):
            prompt = await ms.wait_card(len(decided) + 1, timeout=TIMEOUT)
            card = prompt.card
            assert card is not None
            answer = ms.message("", conversation=THREAD, kind="channel", activity_id=mid,
                                value=card["actions"][press]["data"], reply_to=prompt.id)  # fmt: skip
            await ms.post(endpoint(gw), answer)
            await settled(gw, f"{KEY}/{mid}")
            print(
                "SENT",
                [
                    (s.method, s.id, s.text[:40])
                    for s in ms.sent
                    if s.activity.get("type") != "typing"
                ],
                prompt.id,
            )
            update = await ms.wait_update(prompt.id, timeout=TIMEOUT)
            decided.append(update.activity)
        await ms.wait_text("Done.", timeout=TIMEOUT)
    for activity, verdict in zip(decided, ("approved", "denied"), strict=True):
        assert activity.get("attachments"), f"the card was replaced by text: {activity}"
        card = next(a["content"] for a in activity["attachments"])
        assert not card.get("actions"), card
        assert [b["type"] for b in card["body"]] == ["TextBlock"]
        assert f"fake.add: {verdict} by Aad-User-1." in card["body"][0]["text"], card


async def test_a_card_is_known_as_one_after_a_restart(tmp_path: Path) -> None:
    loaded = load(write_config(tmp_path, "agents:\n  default: {backend: echo}\n"))
    loaded.state_dir.mkdir(parents=True, exist_ok=True)
    stores = build_stores(loaded.config.gateway, loaded.state_dir)
    await stores.open()
    try:
        clock = ManualClock(1000.0)
        card = {"attachments": [{"contentType": CARD_TYPE, "content": {"actions": [{}]}}]}
        before = CardMemory(stores.facts, "teams", clock)
        await before.sent("chat", "act-1", card)
        await before.sent("chat", "act-2", {"text": "draft"})
        after = CardMemory(stores.facts, "teams", clock)  # the next start: nothing in memory
        closed = await after.update_of("chat", "act-1", {"text": "✅ done"})
        assert (
            closed == card_activity("✅ done")
            and not closed["attachments"][0]["content"]["actions"]
        )
        assert await after.update_of("chat", "act-2", {"text": "more"}) == {"text": "more"}
        assert await after.update_of("other", "act-1", {"text": "x"}) == {"text": "x"}
        clock.advance(CARD_TTL_S + 1)
        assert await CardMemory(stores.facts, "teams", clock).update_of(
            "chat", "act-1", {"text": "x"}
        ) == {"text": "x"}
    finally:
        await stores.close()
