"""Voice notes and audio to text through litellm's ``atranscription`` (any Whisper-compatible
endpoint), with one retry of a failed call."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from pathlib import Path

from chatgate import tracing
from chatgate.agents.base import AgentError, ModelMeter
from chatgate.agents.litellm_import import litellm_module
from chatgate.media.metered import audio_usage, metered

ATTEMPTS = 2


@dataclass(frozen=True, slots=True)
class SpeechEndpoint:
    model: str
    api_base: str | None
    api_key: str | None
    timeout_s: float
    meter: ModelMeter | None = None  # the turn's budgets: a transcription is a model call too


class TranscriptionFailed(Exception):
    """The endpoint failed every attempt; the message is operator-safe (no key)."""


async def transcribe(path: Path, name: str, endpoint: SpeechEndpoint) -> str:
    """The speech in ``path``, in a client span (the model as configured, never the words)."""
    with tracing.span(
        "chatgate.media.transcribe",
        kind="client",
        gen_ai__request__model=endpoint.model,
    ) as span:
        try:
            return await _transcribe(path, name, endpoint)
        except TranscriptionFailed as exc:
            span.fail(str(exc) or "transcription_failed")  # the error's type name, no key
            raise


async def _transcribe(path: Path, name: str, endpoint: SpeechEndpoint) -> str:
    litellm = await litellm_module()
    data = await asyncio.to_thread(path.read_bytes)
    last = ""
    for _ in range(ATTEMPTS):
        kwargs: dict[str, object] = {
            "model": endpoint.model,
            "file": (name, data),
            "timeout": endpoint.timeout_s,
            "max_retries": 0,
        }
        if endpoint.api_base:
            kwargs["api_base"] = endpoint.api_base
        if endpoint.api_key:
            kwargs["api_key"] = endpoint.api_key
        try:
            result = await metered(
                endpoint.meter,
                endpoint.model,
                [],
                functools.partial(litellm.atranscription, **kwargs),
                audio_usage(endpoint.model),
            )
        except asyncio.CancelledError:
            raise
        except AgentError as exc:  # a spend budget refused it: no call, no retry
            raise TranscriptionFailed(exc.reason.value) from None
        except Exception as exc:
            last = type(exc).__name__
            continue
        return str(getattr(result, "text", "") or "").strip()
    raise TranscriptionFailed(last)
