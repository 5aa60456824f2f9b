"""Reading a chat-completions answer (whole or streamed) into a ModelStep.

Both model clients hand back the OpenAI shape (``choices``, ``message``/``delta``,
``tool_calls``, ``usage``, ``model``): litellm as objects, the openai SDK route as the parsed JSON
(building the SDK's models costs ~0.8 M instructions a call). One reader serves both, so the two
paths give the same text, tool calls, usage and finish reasons.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from chatgate.agents.tools.loop import ModelStep, RequestedCall

OnDelta = Callable[[str], Awaitable[None]]


def field(value: Any, name: str) -> Any:
    """``value``'s ``name``: a key of parsed JSON or an attribute of a response object."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def read_completion(response: Any, model: str) -> ModelStep:
    """The step a whole (non-streamed) completion answers."""
    choice = field(response, "choices")[0]
    message = field(choice, "message")
    calls = []
    for c in field(message, "tool_calls") or []:
        function = field(c, "function")
        name, arguments = field(function, "name"), field(function, "arguments")
        calls.append(RequestedCall(str(field(c, "id")), str(name or ""), str(arguments or "")))
    step = _step(field(message, "content") or "", calls, model, usage_of(response))
    finished = (str(field(choice, "finish_reason")),)
    return replace(step, response_model=_named(response), finish_reasons=finished)


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
        choices = field(chunk, "choices") or []
        if choices and field(choices[0], "finish_reason"):
            finished = (str(field(choices[0], "finish_reason")),)
        delta = field(choices[0], "delta") if choices else None
        text = field(delta, "content") if delta is not None else None
        for piece in (field(delta, "tool_calls") if delta is not None else None) or []:
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
    index = int(field(piece, "index") or 0)
    entry = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
    if field(piece, "id"):
        entry["id"] = str(field(piece, "id"))
    function = field(piece, "function")
    if function is not None:
        if field(function, "name"):
            entry["name"] = str(field(function, "name"))
        if field(function, "arguments"):
            entry["arguments"] += str(field(function, "arguments"))


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
    model = field(response, "model")
    return model if isinstance(model, str) and model else None


def usage_of(response: Any) -> dict[str, int]:
    """Tokens a response (or stream chunk) reports; {} when it reports none."""
    usage = field(response, "usage")
    if usage is None:
        return {}
    return {
        k: int(field(usage, k) or 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")
    }
