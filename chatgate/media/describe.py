"""Images for a model that cannot see: a configured vision model describes them in words."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatgate import tracing
from chatgate.agents.base import AgentError, ModelMeter
from chatgate.agents.litellm_agent import ModelSpec
from chatgate.agents.litellm_import import litellm_module
from chatgate.media.metered import metered

PROMPT = (
    "Describe this image for an assistant that cannot see it, in a few sentences. "
    "Copy any text in it verbatim."
)


@dataclass(frozen=True, slots=True)
class Describer:
    model: str
    api_base: str | None
    api_key: str | None
    timeout_s: float
    meter: ModelMeter | None = None  # the turn's budgets: the description is a model call too


class DescriptionFailed(Exception):
    """The vision model did not answer; the message is operator-safe (no key)."""


async def describe(part: Mapping[str, Any], describer: Describer) -> str:
    """What the vision model sees in the image ``part``: a GenAI client span like any model
    call (`chat {model}`), marked as the media step it is."""
    with tracing.span(
        f"chat {describer.model}",
        kind="client",
        gen_ai__operation__name="chat",
        gen_ai__request__model=describer.model,
        chatgate__media__step="vision",
    ) as span:
        span.set(**tracing.genai_provider(ModelSpec(describer.model, None, None).provider))
        try:
            return await _describe(part, describer)
        except DescriptionFailed as exc:
            span.fail(str(exc))
            raise


async def _describe(part: Mapping[str, Any], describer: Describer) -> str:
    litellm = await litellm_module()
    content = [{"type": "text", "text": PROMPT}, dict(part)]
    kwargs: dict[str, Any] = {
        "model": describer.model,
        "messages": [{"role": "user", "content": content}],
        "timeout": describer.timeout_s,
        "max_retries": 0,
    }
    if describer.api_base:
        kwargs["api_base"] = describer.api_base
    if describer.api_key:
        kwargs["api_key"] = describer.api_key
    try:
        response = await metered(
            describer.meter,
            describer.model,
            kwargs["messages"],
            lambda: asyncio.wait_for(litellm.acompletion(**kwargs), describer.timeout_s + 5),
        )
    except asyncio.CancelledError:
        raise
    except AgentError as exc:  # a spend budget refused the call
        raise DescriptionFailed(exc.reason.value) from None
    except Exception as exc:
        raise DescriptionFailed(type(exc).__name__) from None
    text = str(response.choices[0].message.content or "").strip()
    if not text:
        raise DescriptionFailed("empty description")
    return text
