"""Echo agent: prefix, multi-message input and word-sized streaming deltas."""

from __future__ import annotations

import pytest

from chatgate.agents.base import Turn
from chatgate.agents.echo import EchoAgent
from chatgate.config.agent_models import EchoAgentConfig
from chatgate.model.chat import ChatMessage
from tests.agents.helpers import Recorder, make_turn


def echo(prefix: str = "") -> EchoAgent:
    return EchoAgent("echo", EchoAgentConfig(backend="echo", prefix=prefix))


@pytest.mark.parametrize(
    ("prefix", "text", "expected"),
    [
        ("", "hello", "hello"),
        ("bot: ", "hello there", "bot: hello there"),
        ("» ", "", "» "),
    ],
)
async def test_reply_is_prefix_plus_input(prefix: str, text: str, expected: str) -> None:
    reply = await echo(prefix).run(make_turn(text))

    assert reply.text == expected
    assert reply.model == "echo"
    assert reply.message is None


async def test_several_new_messages_are_joined_by_newlines() -> None:
    turn = Turn(
        session="s",
        history=(ChatMessage("user", "ignored history"),),
        new=(ChatMessage("user", "first"), ChatMessage("user", "second")),
    )

    reply = await echo("> ").run(turn)

    assert reply.text == "> first\nsecond"


@pytest.mark.parametrize(
    ("prefix", "text", "deltas"),
    [
        ("", "one two three", ["one ", "two ", "three"]),
        ("bot: ", "hi", ["bot: ", "hi"]),
        ("", "single", ["single"]),
        ("", "ends with space ", ["ends ", "with ", "space "]),
        ("", "two  spaces", ["two ", " ", "spaces"]),
    ],
)
async def test_streaming_deltas_rebuild_the_reply_exactly(
    prefix: str, text: str, deltas: list[str]
) -> None:
    recorder = Recorder()

    reply = await echo(prefix).run(make_turn(text, recorder=recorder))

    assert recorder.deltas == deltas
    assert "".join(recorder.deltas) == reply.text


async def test_without_on_delta_nothing_is_streamed() -> None:
    recorder = Recorder()

    reply = await echo().run(make_turn("a b c", recorder=recorder, stream=False))

    assert reply.text == "a b c"
    assert recorder.deltas == []


async def test_contract_extras() -> None:
    agent = echo()

    assert agent.name == "echo"
    assert agent.provider_id() is None
    await agent.aclose()
