"""The media step's model calls (vision description, transcription, speech) as model calls of
the turn: admitted by the turn's meter before the request (a spent budget: no request) and
charged after it with what the provider reported, like the agent's own calls."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from chatgate.agents.base import COST_NANO, ModelMeter
from chatgate.agents.litellm_agent import usage_of
from chatgate.config.cost_map import price_per_second
from chatgate.policies.budgets import usd_to_nano

T = TypeVar("T")


async def metered(
    meter: ModelMeter | None,
    model: str,
    prompt: Sequence[Mapping[str, Any]],
    call: Callable[[], Awaitable[T]],
    usage: Callable[[T], Mapping[str, int]] = usage_of,
) -> T:
    """``call()`` admitted and settled by ``meter`` (None: not metered); a refused admission
    raises the meter's `AgentError` without calling, a failed call is charged nothing."""
    ticket = await meter.admit(model, prompt) if meter is not None else None
    spent: Mapping[str, int] = {}
    try:
        result = await call()
        spent = usage(result)
        return result
    finally:
        if meter is not None:
            await asyncio.shield(meter.settle(ticket, model, spent))


def audio_usage(model: str) -> Callable[[Any], dict[str, int]]:
    """What a transcription or speech response of ``model`` cost: the tokens it reports (a
    token-priced audio model) and its cost in ``COST_NANO``: litellm's reckoning, else the
    seconds the provider reports at the cost map's price per second."""

    def read(response: Any) -> dict[str, int]:
        usage = getattr(response, "usage", None)
        found = usage_of(response) if hasattr(usage, "prompt_tokens") else {}
        tokens_in = int(getattr(usage, "input_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "output_tokens", 0) or 0)
        if tokens_in or tokens_out:
            found = {"prompt_tokens": tokens_in, "completion_tokens": tokens_out}
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
        usd = (
            float(cost) if isinstance(cost, int | float) and cost > 0 else _by_seconds(model, usage)
        )
        return {**found, COST_NANO: usd_to_nano(usd)} if usd > 0 else found

    return read


def _by_seconds(model: str, usage: Any) -> float:
    seconds = getattr(usage, "seconds", None) if getattr(usage, "type", "") == "duration" else None
    if not isinstance(seconds, int | float) or seconds <= 0:
        return 0.0
    per_second = price_per_second(model)
    return float(seconds) * per_second if per_second is not None else 0.0
