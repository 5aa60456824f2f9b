"""Reading a chat-completions answer (whole or streamed) into a ModelStep.

Both model clients (litellm and the openai SDK) hand back OpenAI-shaped objects: ``choices``,
``message``/``delta``, ``tool_calls``, ``usage``, ``model``; one reader serves both, so the two
paths give the same text, tool calls, usage and finish reasons.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from chatgate.agents.tools.loop import ModelStep, RequestedCall

OnDelta = Callable[[str], Awaitable[None]]


def read_completion(response: Any, model: str) -> ModelStep:
    """The step a whole (non-streamed) completion answers."""
    choice = response.choices[0]
    message = choice.message
    calls = [
        RequestedCall(str(c.id), str(c.function.name or ""), str(c.function.arguments or ""))
        for c in (getattr(message, "tool_calls", None) or [])
    ]
    step = _step(message.content or "", calls, model, usage_of(response))
    return replace(
        step, response_model=_named(response), finish_reasons=(str(choice.finish_reason),)
    )


async def read_stream(
    chunks: AsyncIterable[Any], model: str, on_delta: OnDelta | None
) -> ModelStep:
    """The step a streamed completion answers; each text delta is passed to ``on_delta``."""
    parts: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    usage: dict[str, int] = {}
    answered_by: str | None = None  # the model the provider names in its chunks
    finished: tuple[str, ...] = ()
    async for chunk in chunks:
        reported = usage_of(chunk)
        if reported.get("total_tokens"):
            usage = reported
        answered_by = answered_by or _named(chunk)
        choices = getattr(chunk, "choices", None) or []
        if choices and getattr(choices[0], "finish_reason", None):
            finished = (str(choices[0].finish_reason),)
        delta = choices[0].delta if choices else None
        text = getattr(delta, "content", None) if delta is not None else None
        for piece in getattr(delta, "tool_calls", None) or []:
            _merge_call_delta(calls, piece)
        if text:
            parts.append(text)
            if on_delta is not None:
                await on_delta(text)
    requested = [
        RequestedCall(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())
    ]
    step = _step("".join(parts), requested, model, usage)
    return replace(step, response_model=answered_by, finish_reasons=finished)


def _merge_call_delta(calls: dict[int, dict[str, str]], piece: Any) -> None:
    """Fold one streamed tool-call fragment (OpenAI delta form) into ``calls`` by index."""
    index = int(getattr(piece, "index", 0) or 0)
    entry = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
    if getattr(piece, "id", None):
        entry["id"] = str(piece.id)
    function = getattr(piece, "function", None)
    if function is not None:
        if getattr(function, "name", None):
            entry["name"] = str(function.name)
        if getattr(function, "arguments", None):
            entry["arguments"] += str(function.arguments)


def _step(text: str, calls: list[RequestedCall], model: str, usage: Mapping[str, int]) -> ModelStep:
    """A model answer plus the assistant message that goes back with the tool results."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in calls
        ]
    return ModelStep(text, calls, model, message, usage)


def _named(response: Any) -> str | None:
    """The model a response (or stream chunk) says answered, as the provider names it."""
    model = getattr(response, "model", None)
    return model if isinstance(model, str) and model else None


def usage_of(response: Any) -> dict[str, int]:
    """Tokens a response (or stream chunk) reports; {} when it reports none."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return {}
    return {
        k: int(getattr(usage, k, 0) or 0)
        for k in ("prompt_tokens", "completion_tokens", "total_tokens")
    }
