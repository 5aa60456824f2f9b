"""Top-level gateway.yaml model and the `gateway:` section."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from chatgate.config.agent_models import AgentConfig, EchoAgentConfig
from chatgate.config.base import StrictModel
from chatgate.config.budget_models import BudgetRuleConfig
from chatgate.config.channel_models import TARGET_PATTERN
from chatgate.config.retention_models import RetentionConfig
from chatgate.config.schedule_models import JOB_ID_PATTERN, ScheduleConfig
from chatgate.config.telemetry_models import TelemetryConfig
from chatgate.config.text_models import FailureReplies, Language, TextOverrides
from chatgate.config.tool_models import SERVER_NAME, McpServerConfig
from chatgate.policies.operator_notify import DEFAULT_EVERY_S

CONFIG_VERSION = 1
ADDRESS_PATTERN = r"^[a-z][a-z0-9_-]*:\S+$"
LoopChoice = Literal["auto", "uvloop", "asyncio"]


class HttpConfig(StrictModel):
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    keepalive_timeout_s: float = Field(
        15.0, gt=0, description="a client must send a whole request within this; idle close"
    )
    max_connections: int = Field(1000, ge=8, description="connections past this are closed")
    backlog: int = Field(128, ge=1)


class StoreConfig(StrictModel):
    backend: Literal["sqlite", "redis"] = "sqlite"
    synchronous: Literal["normal", "full"] = "normal"
    url: SecretStr | None = Field(
        None, description="redis backend: connection URL (or url_file); default gateway.redis.url"
    )
    key_prefix: str | None = Field(
        None, description="redis backend: default gateway.redis.key_prefix"
    )


class TurnLockConfig(StrictModel):
    backend: Literal["local", "redis"] = "local"
    ttl_s: float = Field(60.0, gt=0)


class RedisConfig(StrictModel):
    """The Redis connection shared by the store, the turn lock and the channel leases."""

    url: SecretStr = SecretStr("redis://127.0.0.1:6379/0")
    key_prefix: str = "chatgate:"
    lease_ttl_s: float = Field(
        10.0, gt=0, description="channel ownership lease; a standby takes over within this"
    )
    replica_id: str | None = Field(None, description="default: hostname-pid")


class SessionsConfig(StrictModel):
    warm_max: int = Field(10_000, ge=1)
    max_messages: int = Field(200, ge=2, description="transcript tail kept per session")
    mid_turn: Literal["queue", "collect", "interrupt"] = "queue"
    max_queued: int = Field(
        100, ge=1, description="messages waiting per session before new ones are refused"
    )
    per_user_in_groups: bool = False


class BucketConfig(StrictModel):
    rate_per_s: float = Field(ge=0)
    burst: int = Field(ge=1)


class RateLimitsConfig(StrictModel):
    per_sender: BucketConfig | None = BucketConfig(rate_per_s=0.5, burst=10)
    per_chat: BucketConfig | None = BucketConfig(rate_per_s=2.0, burst=30)
    global_: BucketConfig | None = Field(None, alias="global")


class DeliveryConfig(StrictModel):
    max_attempts: int = Field(5, ge=1, le=20)
    base_delay_s: float = Field(0.5, ge=0)
    max_delay_s: float = Field(30.0, gt=0)


class LoopGuardConfig(StrictModel):
    max_bot_turns: int = Field(5, ge=1)
    window_s: float = Field(60.0, gt=0)


class MemoryConfig(StrictModel):
    limit_mb: int | None = Field(None, gt=0)
    shed_ratio: float = Field(0.95, gt=0, le=1)
    headroom_ratio: float = Field(0.85, gt=0, le=1)
    interval_s: float = Field(5.0, gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> MemoryConfig:
        if self.headroom_ratio > self.shed_ratio:
            raise ValueError("headroom_ratio must not exceed shed_ratio (evict before shedding)")
        return self


class SupervisionConfig(StrictModel):
    """Channel restart ladder, fleet crash-loop breaker and provider probing."""

    backoff_initial_s: float = Field(1.0, gt=0)
    backoff_max_s: float = Field(60.0, gt=0)
    restarts_per_hour: int = Field(10, ge=1, description="per channel, then it is parked")
    fleet_restarts_per_hour: int = Field(40, ge=1)
    fleet_failing_fraction: float = Field(0.5, gt=0, le=1)
    breaker_cooldown_s: float = Field(120.0, ge=0)
    healthy_after_s: float = Field(60.0, gt=0, description="a run this long resets the backoff")
    stall_check_s: float = Field(15.0, gt=0)
    provider_probe_s: float = Field(
        60.0, gt=0, description="how often a degraded provider is retried"
    )


class WatchdogConfig(StrictModel):
    interval_s: float = Field(0.5, gt=0)
    max_lag_s: float = Field(2.0, gt=0)


class LogConfig(StrictModel):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["text", "json"] = "text"


class TakeoverConfig(StrictModel):
    """A human taking over a chat (`chatgate chats pause`, the dashboard, `/bot off`)."""

    auto_resume_s: float = Field(
        3600.0, ge=0, description="a paused chat resumes by itself after this long; 0 = never"
    )
    interrupt_running: bool = Field(
        False,
        description="a pause cancels the chat's answer being written (kept as context);"
        " false: that answer is still sent",
    )


class ConfigEditConfig(StrictModel):
    """Editing gateway.yaml from the dashboard's Config page (`/api/config`)."""

    enabled: bool = Field(
        True, description="false: the page shows the config and validates, but never writes"
    )
    backups: int = Field(
        5, ge=1, le=100, description="previous versions kept as gateway.yaml.1 … .N"
    )


class GatewaySection(StrictModel):
    http: HttpConfig = Field(default_factory=HttpConfig)
    api_token: SecretStr | None = None
    state_dir: Path = Path(".chatgate")
    store: StoreConfig = Field(default_factory=StoreConfig)
    turn_lock: TurnLockConfig = Field(default_factory=TurnLockConfig)
    redis: RedisConfig = Field(default_factory=RedisConfig)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
    rate_limits: RateLimitsConfig = Field(default_factory=RateLimitsConfig)
    delivery: DeliveryConfig = Field(default_factory=DeliveryConfig)
    loop_guard: LoopGuardConfig = Field(default_factory=LoopGuardConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    supervision: SupervisionConfig = Field(default_factory=SupervisionConfig)
    watchdog: WatchdogConfig = Field(default_factory=WatchdogConfig)
    log: LogConfig = Field(default_factory=LogConfig)
    event_loop: LoopChoice = Field(
        "auto", description="auto: uvloop when installed; uvloop; asyncio (the standard library's)"
    )
    dedupe_window_s: float = Field(86_400.0, gt=0)
    drain_timeout_s: float = Field(30.0, ge=0)
    silence_markers: list[str] = Field(default_factory=lambda: ["NO_REPLY", "[SILENT]"])
    empty_reply_text: str | None = None
    language: Language = Field("en", description="texts' language when the user's is unknown")
    failure_replies: FailureReplies = Field(
        "user", description="user: plain texts in chats; verbose: the operator detail too"
    )
    texts: TextOverrides = Field(default_factory=TextOverrides)
    operator_notify: str | None = Field(
        None,
        pattern=TARGET_PATTERN,
        description="CHANNEL:CHAT that is sent failed turns' operator detail",
    )
    operator_notify_every_s: float = Field(
        DEFAULT_EVERY_S, gt=0, description="at most one operator notice per reason this often"
    )
    operators: list[Annotated[str, Field(pattern=ADDRESS_PATTERN)]] = Field(
        default_factory=list,
        description="CHANNEL:USER_ID of people who may send /bot off and /bot on in a chat",
    )
    takeover: TakeoverConfig = Field(default_factory=TakeoverConfig)
    config_edit: ConfigEditConfig = Field(default_factory=ConfigEditConfig)

    @field_validator("event_loop")
    @classmethod
    def _loop_installed(cls, value: LoopChoice) -> LoopChoice:
        if value == "uvloop" and importlib.util.find_spec("uvloop") is None:
            raise ValueError("uvloop is not installed here; use auto or asyncio")
        return value

    def redis_url(self) -> str:
        """The Redis URL the store, lock and leases share (a secret: never log it)."""
        url = self.store.url or self.redis.url
        return url.get_secret_value()

    def redis_prefix(self) -> str:
        return self.store.key_prefix if self.store.key_prefix is not None else self.redis.key_prefix

    @property
    def uses_redis(self) -> bool:
        return self.store.backend == "redis" or self.turn_lock.backend == "redis"


class RouteMatch(StrictModel):
    channel: str | None = None
    chat_id: str | None = None
    thread_id: str | None = None
    sender_id: str | None = None
    chat_kind: Literal["direct", "group", "channel"] | None = None


class RouteBindingConfig(StrictModel):
    match: RouteMatch
    agent: str


def _default_agents() -> dict[str, Any]:
    return {"default": EchoAgentConfig(backend="echo")}


class GatewayConfig(StrictModel):
    config_version: int = CONFIG_VERSION
    gateway: GatewaySection = Field(default_factory=GatewaySection)
    agents: dict[str, AgentConfig] = Field(default_factory=_default_agents)
    routes: list[RouteBindingConfig] = Field(default_factory=list)
    mcp_servers: dict[Annotated[str, Field(pattern=SERVER_NAME)], McpServerConfig] = Field(
        default_factory=dict, description="MCP tool servers, started when an agent first needs one"
    )
    identities: dict[str, list[Annotated[str, Field(pattern=ADDRESS_PATTERN)]]] = Field(
        default_factory=dict,
        description="principal → the channel:sender_id addresses that are the same person",
    )
    schedules: dict[Annotated[str, Field(pattern=JOB_ID_PATTERN)], ScheduleConfig] = Field(
        default_factory=dict, description="job id → a cron, interval or one-shot job"
    )
    telemetry: TelemetryConfig = Field(default_factory=TelemetryConfig)
    retention: RetentionConfig = Field(
        default_factory=RetentionConfig, description="transcripts and journal content purged by age"
    )
    budgets: list[BudgetRuleConfig] = Field(
        default_factory=list, description="spend limits; several may apply, the strictest decides"
    )

    @field_validator("identities")
    @classmethod
    def _one_principal_each(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        seen: dict[str, str] = {}
        for principal, addresses in value.items():
            for address in addresses:
                if address in seen and seen[address] != principal:
                    raise ValueError(
                        f"{address} is listed under both {seen[address]} and {principal}"
                    )
                seen[address] = principal
        return value
