"""Python agent: sync and async callables, reply coercion, and that sync code runs off the loop."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from chatgate.agents.base import AgentError, AgentReply
from chatgate.agents.python_callable import PythonAgent
from chatgate.config.agent_models import PythonAgentConfig
from chatgate.model.chat import ChatMessage
from chatgate.model.outbound import Button, Buttons, OutboundMessage, Text
from chatgate.model.reasons import FailureReason
from tests.agents.callables import Gate
from tests.agents.helpers import make_turn

MODULE = "tests.agents.callables"
BLOCKS_MESSAGE = OutboundMessage(
    (Text("Pick one"), Buttons((Button("Yes", "yes"), Button("No", "no"))))
)


def python_agent(function: str, max_history: int = 50) -> PythonAgent:
    return PythonAgent(
        "py",
        PythonAgentConfig(
            backend="python", function=f"{MODULE}:{function}", max_history=max_history
        ),
    )


# (returned value, expected reply text, expected reply.message)
RESULTS: list[tuple[Any, str, OutboundMessage | None]] = [
    ("plain text", "plain text", None),
    ("", "", None),
    (None, "", None),
    ({"reply": "from reply"}, "from reply", None),
    ({"text": "from text"}, "from text", None),
    ({"reply": None}, "", None),
    (
        {
            "blocks": [
                {"type": "text", "text": "Pick one"},
                {
                    "type": "buttons",
                    "buttons": [{"label": "Yes", "value": "yes"}, {"label": "No", "value": "no"}],
                },
            ]
        },
        BLOCKS_MESSAGE.plain_text,
        BLOCKS_MESSAGE,
    ),
    (BLOCKS_MESSAGE, BLOCKS_MESSAGE.plain_text, BLOCKS_MESSAGE),
    (AgentReply(text="ready-made", model="mine"), "ready-made", None),
]


@pytest.mark.parametrize("function", ["given_result", "given_result_async"])
@pytest.mark.parametrize(("result", "text", "message"), RESULTS)
async def test_return_values_are_coerced(
    function: str, result: Any, text: str, message: OutboundMessage | None
) -> None:
    reply = await python_agent(function).run(make_turn(metadata={"result": result}))

    assert reply.text == text
    assert reply.message == message
    if isinstance(result, AgentReply):
        assert reply is result


@pytest.mark.parametrize("function", ["given_result", "given_result_async"])
@pytest.mark.parametrize(
    "result",
    [
        42,
        ["a", "list"],
        {"reply": 7},
        {"blocks": [{"type": "no-such-block"}]},
        {"blocks": "not a list"},
    ],
)
async def test_unusable_return_values_are_format_errors(function: str, result: Any) -> None:
    agent = python_agent(function)

    with pytest.raises(AgentError) as caught:
        await agent.run(make_turn(metadata={"result": result}))

    assert caught.value.reason is FailureReason.FORMAT_ERROR


async def test_sync_function_does_not_block_the_event_loop() -> None:
    gate = Gate()
    agent = python_agent("blocks_until_released")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        assert await asyncio.to_thread(gate.entered.wait, 2.0)
        for _ in range(10):  # the loop keeps running while the function is parked in its thread
            ticks += 1
            await asyncio.sleep(0)
        gate.release.set()

    reply, _ = await asyncio.gather(agent.run(make_turn(metadata={"gate": gate})), ticker())

    assert reply.text == "released"
    assert ticks == 10


async def test_sync_function_runs_in_a_worker_thread() -> None:
    reply = await python_agent("thread_name").run(make_turn())

    assert reply.text != threading.current_thread().name


async def test_object_with_async_call_is_awaited() -> None:
    reply = await python_agent("async_object").run(make_turn("ping"))

    assert reply.text == "object saw ping"


async def test_exception_in_function_propagates_unchanged() -> None:
    with pytest.raises(RuntimeError, match="bug inside the agent function"):
        await python_agent("crashes").run(make_turn())


async def test_contract_extras() -> None:
    agent = python_agent("given_result")

    assert agent.name == "py"
    assert agent.provider_id() is None
    await agent.aclose()


@pytest.mark.parametrize(("max_history", "seen"), [(2, "h3|h4"), (0, ""), (10, "h1|h2|h3|h4")])
async def test_max_history_trims_the_transcript_given(max_history: int, seen: str) -> None:
    history = [ChatMessage("user", f"h{i}") for i in range(1, 5)]
    agent = python_agent("history_contents", max_history=max_history)

    reply = await agent.run(make_turn(history=history))

    assert reply.text == seen
