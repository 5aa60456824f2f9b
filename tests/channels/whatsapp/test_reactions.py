"""reactions on WhatsApp: a user's reaction on one of the bot's answers starts a turn or is kept
as context for the next one; a reaction on anything else (or a removed reaction) is ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.policies.reactions import ReactionMode, reaction_input
from tests.channels.telegram.helpers_b import settled
from tests.channels.whatsapp.support import USER, webhook_url, whatsapp_config
from tests.fakes.llm import FakeLLM
from tests.fakes.whatsapp import FakeWhatsApp
from tests.harness import running

M = ReactionMode


@pytest.mark.parametrize(
    ("mode", "emoji", "ours", "result"),
    [(M.TURN, "👍", True, M.TURN), (M.CONTEXT, "👍", True, M.CONTEXT),
     (M.IGNORE, "👍", True, M.IGNORE), (M.TURN, "👍", False, M.IGNORE),
     (M.TURN, "", True, M.IGNORE)],  # removing a reaction is no input
)  # fmt: skip
def test_reaction_input(mode: M, emoji: str, ours: bool, result: M) -> None:
    assert reaction_input(mode, emoji, ours) is result


def _react(fake: FakeWhatsApp, on: str, wamid: str, emoji: str = "👍") -> dict[str, object]:
    return fake.message(USER, "reaction", wamid=wamid, reaction={"message_id": on, "emoji": emoji})


@pytest.mark.parametrize("mode", ["turn", "context"])
async def test_a_reaction_on_an_answer_is_input(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM, mode: str
) -> None:
    channel = f"    dm_policy: open\n    reactions: {mode}\n"
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm, channel=channel)) as gw:
        url = webhook_url(gw)
        await fake_wa.post(url, fake_wa.message(USER, text="hello", wamid="wamid.IN-1"))
        await fake_wa.wait_sent(1)
        [answer] = (await settled(gw, "whatsapp:wamid.IN-1")).delivery_ids
        await fake_wa.post(url, _react(fake_wa, "wamid.IN-1", "wamid.IN-r0"))  # on its own
        await fake_wa.post(url, _react(fake_wa, answer, "wamid.IN-r1"))
        await settled(gw, "whatsapp:wamid.IN-r1")
        await fake_wa.post(url, fake_wa.message(USER, text="thanks", wamid="wamid.IN-2"))
        await settled(gw, "whatsapp:wamid.IN-2")
        ignored = await gw.rt.journal.find("whatsapp", message_id="wamid.IN-r0")
    users = [m["content"] for m in fake_llm.requests[-1].messages if m["role"] == "user"]
    assert users == ["hello", "👍 on your answer", "thanks"]
    assert len(fake_llm.requests) == (3 if mode == "turn" else 2)
    assert ignored == []  # a reaction on the user's own message never reached intake
