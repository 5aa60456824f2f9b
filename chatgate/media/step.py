"""The turn's media step: one call from the turn, `prepare_turn_input`."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chatgate.agents.base import ModelMeter
from chatgate.config.base import secret_value
from chatgate.config.media_models import AgentMediaConfig
from chatgate.media.describe import Describer
from chatgate.media.prepare import Fetcher, MediaContext, PreparedInput, prepare_attachments
from chatgate.media.transcribe import SpeechEndpoint
from chatgate.model.messages import InboundMessage

log = logging.getLogger("chatgate.media")


async def prepare_turn_input(
    messages: Sequence[InboundMessage],
    fetcher: Fetcher | None,
    agent_cfg: Any,
    state_dir: Path,
    download_cap: int | None = None,
    meter: ModelMeter | None = None,
) -> PreparedInput:
    """Fetch, check and understand the attachments of a turn's messages for agent ``agent_cfg``
    (no attachments: an empty result, nothing imported or awaited); ``download_cap`` is the
    channel's own cap on downloads (its `FileLimits.max_download_bytes`)."""
    if not any(m.attachments for m in messages):
        return PreparedInput()
    media: AgentMediaConfig = agent_cfg.media
    ctx = MediaContext(
        config=media,
        download_cap=download_cap,
        state_dir=state_dir,
        vision=media.vision if media.vision is not None else await model_sees_images(agent_cfg),
        speech=speech_endpoint(agent_cfg, meter),
        describer=describer(agent_cfg, meter),
    )
    return await prepare_attachments(messages, fetcher, ctx)


async def model_sees_images(agent_cfg: Any) -> bool:
    """litellm's own capability lookup for a litellm agent's model; other backends: no."""
    if getattr(agent_cfg, "backend", None) != "litellm":
        return False
    from chatgate.agents.litellm_import import litellm_module

    litellm = await litellm_module()
    try:
        return bool(litellm.supports_vision(model=agent_cfg.model))
    except Exception:  # an unknown model: litellm raises instead of answering no
        return False


def speech_endpoint(agent_cfg: Any, meter: ModelMeter | None = None) -> SpeechEndpoint | None:
    """`media.transcription`, or by default the litellm agent's own endpoint with whisper-1."""
    media: AgentMediaConfig = agent_cfg.media
    timeout = float(agent_cfg.timeout_s)
    spec = media.transcription
    if spec is not None:
        base = spec.api_base or getattr(agent_cfg, "api_base", None)
        key = secret_value(spec.api_key) or secret_value(getattr(agent_cfg, "api_key", None))
        return SpeechEndpoint(spec.model, base, key, timeout, meter)
    if getattr(agent_cfg, "backend", None) != "litellm":
        return None
    key = secret_value(agent_cfg.api_key)
    return SpeechEndpoint("whisper-1", agent_cfg.api_base, key, timeout, meter)


def describer(agent_cfg: Any, meter: ModelMeter | None = None) -> Describer | None:
    """`media.vision_model` with the agent's own api_base/api_key, if configured."""
    media: AgentMediaConfig = agent_cfg.media
    if media.vision_model is None:
        return None
    return Describer(
        media.vision_model,
        getattr(agent_cfg, "api_base", None),
        secret_value(getattr(agent_cfg, "api_key", None)),
        float(agent_cfg.timeout_s),
        meter,
    )
