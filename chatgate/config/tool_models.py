"""gateway.yaml sections for tools: an agent's `tools:` and the top-level `mcp_servers:`."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, SecretStr, field_validator, model_validator

from chatgate.config.base import StrictModel, TimeZone
from chatgate.policies.taint import Effect
from chatgate.policies.tools import Approval

BUILTIN_SERVER = "gateway"  # reserved: no MCP server may take this name
SCHEDULE = f"{BUILTIN_SERVER}.schedule"
LIST_JOBS = f"{BUILTIN_SERVER}.list_jobs"
CANCEL_JOB = f"{BUILTIN_SERVER}.cancel_job"
SCHEDULE_TOOLS = (SCHEDULE, LIST_JOBS, CANCEL_JOB)

SERVER_NAME = r"^[A-Za-z][A-Za-z0-9_-]*$"  # `gateway` is refused in tool_checks (built-ins)
ADDRESS = r"^[a-z][a-z0-9_-]*:[^:\s]+(:[^:\s]+)?$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class ScheduleToolConfig(StrictModel):
    """The built-in `gateway.schedule` tools: the agent schedules jobs for its chat, bounded."""

    max_jobs: int = Field(5, ge=1, le=100, description="the agent's jobs kept per chat")
    min_interval_s: float = Field(
        3600.0, ge=60, description="a repeating job may not run more often than this"
    )
    max_ahead_days: float = Field(366.0, gt=0, description="how far ahead a one-shot job may be")
    tz: TimeZone = Field(
        "UTC", description="zone of cron times and of times given without an offset"
    )
    targets: dict[str, Annotated[str, Field(pattern=ADDRESS)]] = Field(
        default_factory=dict,
        description="other chats (name → channel:chat_id[:thread_id]) jobs may deliver to",
    )


class AgentToolsConfig(StrictModel):
    """Which tools a litellm agent may call and how far its tool loop may go in one turn."""

    allow: list[str] = Field(
        default_factory=list, description="globs over `server.tool` names; empty allows none"
    )
    deny: list[str] = Field(default_factory=list, description="globs that win over allow")
    approval: dict[str, Approval] = Field(
        default_factory=dict,
        description="glob → auto | ask | deny; first match wins, else auto",
    )
    effects: dict[str, Effect] = Field(
        default_factory=dict,
        description="glob → read | write: overrides the MCP annotations (unknown tools: write)",
    )
    untrusted_output: list[str] = Field(
        default_factory=list,
        description="globs of tools whose results taint the turn (besides `openWorldHint` ones)",
    )
    approval_timeout_s: float = Field(
        300.0, gt=0, le=86_400, description="`ask`: how long a prompt waits; no answer = deny"
    )
    approver: str | None = Field(
        None,
        pattern=ADDRESS,
        description="`ask`: channel:chat_id[:thread_id] of an operator chat that answers the "
        "prompts (anyone in it); default: the user of the session, in the chat of the turn",
    )
    max_steps: int = Field(8, ge=1, le=100, description="model calls that may ask for tools")
    tool_timeout_s: float = Field(30.0, gt=0, description="bound of one tool call")
    budget_tokens: int | None = Field(None, gt=0, description="tokens over all steps of a turn")
    budget_s: float | None = Field(None, gt=0, description="wall time of the whole tool loop")
    max_result_chars: int = Field(
        8000, ge=100, description="a tool result is cut to this before the model sees it"
    )
    parallel: bool = Field(True, description="run several calls of one step concurrently")
    send_to: dict[str, Annotated[str, Field(pattern=ADDRESS)]] = Field(
        default_factory=dict,
        description="name → channel:chat_id[:thread_id] the gateway.send_message tool may use",
    )
    schedule: ScheduleToolConfig | None = Field(
        None, description="enable gateway.schedule / list_jobs / cancel_job (`true` = defaults)"
    )
    show_tool_progress: bool = Field(
        True, description="show 'using server.tool…' while tools run (draft or status message)"
    )
    native: bool = Field(
        False, description="assert the model calls tools natively (a provider chatgate can't tell)"
    )

    @model_validator(mode="before")
    @classmethod
    def _list_is_allow(cls, value: object) -> object:
        """`tools: [github.*, search.web]` is short for `tools: {allow: [...]}`."""
        return {"allow": value} if isinstance(value, list) else value

    @field_validator("schedule", mode="before")
    @classmethod
    def _schedule_switch(cls, value: object) -> object:
        """`schedule: true` enables the schedule tools with their defaults."""
        if value is True:
            return {}
        return None if value is False else value


class McpServerConfig(StrictModel):
    """One MCP server: a stdio command (run as the daemon's user) or a streamable HTTP URL."""

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, SecretStr] = Field(default_factory=dict, description="stdio: extra env")
    env_passthrough: list[Annotated[str, Field(pattern=ENV_NAME)]] = Field(
        default_factory=list,
        description="stdio: names of the daemon's env variables the server also gets",
    )
    cwd: str | None = Field(None, description="stdio: working directory of the server")
    url: str | None = Field(None, pattern=r"^https?://", description="streamable HTTP endpoint")
    headers: dict[str, SecretStr] = Field(
        default_factory=dict, description="HTTP: sent on each request"
    )
    startup_timeout_s: float = Field(20.0, gt=0, description="start + handshake + tool listing")
    restart_budget_per_hour: int = Field(
        10, ge=1, description="restarts after a crash within an hour before the server is parked"
    )

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of `command` (stdio) or `url` (streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.env_passthrough or self.cwd):
            raise ValueError(
                "`args`, `env`, `env_passthrough` and `cwd` apply to a stdio `command`, not to `url`"
            )
        if self.command is not None and self.headers:
            raise ValueError("`headers` apply to a `url` server, not to a stdio `command`")
        return self

    @field_validator("command")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"
