"""Agent backend sections of gateway.yaml (discriminated by `backend`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator

from chatgate.config.base import StrictModel
from chatgate.config.budget_models import PriceConfig
from chatgate.config.media_models import AgentMediaConfig
from chatgate.config.text_models import TextOverrides
from chatgate.config.tool_models import AgentToolsConfig


class FallbackModel(StrictModel):
    model: str
    api_base: str | None = None
    api_key: SecretStr | None = None


class _AgentBase(StrictModel):
    system_prompt: str | None = None
    max_history: int = Field(50, ge=0, description="transcript messages sent with each turn")
    timeout_s: float = Field(60.0, gt=0)
    media: AgentMediaConfig = Field(default_factory=AgentMediaConfig)
    texts: TextOverrides = Field(default_factory=TextOverrides)


class LiteLLMAgentConfig(_AgentBase):
    backend: Literal["litellm"]
    model: str = Field(min_length=1)
    api_base: str | None = None
    api_key: SecretStr | None = None
    fallbacks: list[FallbackModel] = Field(default_factory=list)
    max_tokens: int | None = Field(None, gt=0)
    temperature: float | None = Field(None, ge=0, le=2)
    stream: bool = False
    prewarm: bool = True
    tools: AgentToolsConfig | None = Field(None, description="tool calling (MCP servers)")
    # Spoken replies: a voice note (OGG/Opus from `voice_model`) goes with the text answer.
    voice_reply: Literal["never", "when_user_sent_voice", "always"] = "never"
    voice_model: str | None = Field(None, min_length=1, validate_default=True)
    voice: str = Field("alloy", min_length=1)
    price: PriceConfig | None = Field(None, description="USD per million tokens (budgets)")
    max_concurrent: int | None = Field(
        None, ge=1, description="model calls in flight at once for this agent (the process)"
    )
    client: Literal["auto", "litellm"] = Field(
        "auto",
        description="auto: openai/ models go through the openai SDK directly (a sixth of "
        "litellm's CPU per call), other providers through litellm; litellm: every call through "
        "litellm",
    )

    @field_validator("api_base", mode="before")
    @classmethod
    def _blank_base(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("voice_model")
    @classmethod
    def _voice_needs_a_model(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("voice_reply", "never") != "never":
            raise ValueError(
                "voice_reply needs voice_model (a text-to-speech model, e.g. openai/tts-1)"
            )
        return value

    @field_validator("fallbacks", mode="before")
    @classmethod
    def _fallback_strings(cls, value: object) -> object:
        if isinstance(value, list):
            return [{"model": v} if isinstance(v, str) else v for v in value]
        return value


class EchoAgentConfig(_AgentBase):
    backend: Literal["echo"]
    prefix: str = ""
    delay_s: float = Field(0.0, ge=0)


class PythonAgentConfig(_AgentBase):
    backend: Literal["python"]
    function: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class HttpAgentConfig(_AgentBase):
    backend: Literal["http"]
    url: str = Field(pattern=r"^https?://")
    api_key: SecretStr | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)


AgentConfig = Annotated[
    LiteLLMAgentConfig | EchoAgentConfig | PythonAgentConfig | HttpAgentConfig,
    Field(discriminator="backend"),
]
AGENT_BACKENDS = ("litellm", "echo", "python", "http")
