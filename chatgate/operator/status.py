"""The `status` answer as a typed snapshot: what `chatgate status` and the dashboard show.

`StatusSnapshot.from_json` reads the /api/status JSON (lenient: a part an older daemon does not
send reads as absent), so a renderer works on named fields instead of dictionary lookups. A
feature's own status sections (jobs, paused chats) are kept as they came, under `sections`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Json = Mapping[str, Any]
FEATURE_SECTIONS = ("jobs", "chats")


def _map(data: Json, key: str) -> Json:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def _list(data: Json, key: str) -> list[Any]:
    value = data.get(key)
    return list(value) if isinstance(value, list | tuple) else []


@dataclass(frozen=True)
class RouteView:
    name: str
    path: str
    respond: str
    configured: bool

    @classmethod
    def from_json(cls, name: str, data: Json) -> RouteView:
        return cls(name, data["path"], data["respond"], bool(data.get("configured")))


@dataclass(frozen=True)
class LastError:
    error: str
    at: float | None
    hint: str | None

    @classmethod
    def from_json(cls, data: object) -> LastError | None:
        if not isinstance(data, Mapping) or not data.get("error"):
            return None
        return cls(str(data["error"]), data.get("at"), data.get("hint"))


@dataclass(frozen=True)
class ChannelView:
    name: str
    state: str
    since: float | None = None
    next_retry_at: float | None = None
    restarts: int = 0
    summary: str | None = None
    error: str | None = None
    hint: str | None = None
    last_error: LastError | None = None
    routes: tuple[RouteView, ...] = ()

    @classmethod
    def from_json(cls, data: Json) -> ChannelView:
        routes = tuple(RouteView.from_json(n, r) for n, r in _map(data, "routes").items())
        return cls(
            name=data["name"],
            state=data["state"],
            since=data.get("since"),
            next_retry_at=data.get("next_retry_at"),
            restarts=data.get("restarts") or 0,
            summary=data.get("summary"),
            error=data.get("error"),
            hint=data.get("hint"),
            last_error=LastError.from_json(data.get("last_error")),
            routes=routes,
        )


@dataclass(frozen=True)
class ClusterView:
    replica: str | None
    shared: bool
    error: str | None = None
    owned: tuple[str, ...] = ()
    peers: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: Json) -> ClusterView:
        return cls(
            replica=data.get("replica"),
            shared=bool(data.get("shared")),
            error=data.get("error"),
            owned=tuple(_list(data, "owned")),
            peers=tuple(_list(data, "peers")),
        )


@dataclass(frozen=True)
class BreakerView:
    tripped: bool
    until: float | None
    restarts_per_hour: int | None
    failing_fraction: float

    @classmethod
    def from_json(cls, data: Json) -> BreakerView:
        return cls(
            tripped=bool(data.get("tripped")),
            until=data.get("until"),
            restarts_per_hour=data.get("restarts_per_hour"),
            failing_fraction=data.get("failing_fraction", 0),
        )


@dataclass(frozen=True)
class AgentView:
    name: str
    backend: str
    model: str | None = None


@dataclass(frozen=True)
class McpServerView:
    name: str | None
    transport: str | None
    state: str | None
    tools: tuple[str, ...] = ()
    restarts: int = 0
    error: str | None = None

    @classmethod
    def from_json(cls, data: Json) -> McpServerView:
        return cls(
            name=data.get("name"),
            transport=data.get("transport"),
            state=data.get("state"),
            tools=tuple(_list(data, "tools")),
            restarts=data.get("restarts") or 0,
            error=data.get("error"),
        )


@dataclass(frozen=True)
class SessionsView:
    warm: int = 0
    active_turns: int = 0
    queued: int = 0
    evictions: int = 0


@dataclass(frozen=True)
class DegradedView:
    owner_kind: str | None = None
    owner_id: str | None = None
    reason: str | None = None
    retry_hint: str | None = None


@dataclass(frozen=True)
class MemoryView:
    rss_bytes: float | None = None
    limit_bytes: float | None = None
    ratio: float | None = None
    shedding: bool = False
    evictions: int = 0


@dataclass(frozen=True)
class LoopView:
    implementation: str = "?"
    lag_s: float = 0.0
    max_lag_s: float | str = "?"
    healthy: bool = True


def _fields(cls: type, data: Json) -> dict[str, Any]:
    """The keys of ``data`` that are fields of dataclass ``cls`` (others are ignored)."""
    names = cls.__dataclass_fields__  # type: ignore[attr-defined]
    return {k: v for k, v in data.items() if k in names and v is not None}


@dataclass(frozen=True)
class StatusSnapshot:
    version: str | None = None
    ready: bool = False
    draining: bool = False
    uptime_s: float = 0.0
    http_host: str | None = None
    http_port: int | None = None
    channels: tuple[ChannelView, ...] = ()
    cluster: ClusterView | None = None
    breaker: BreakerView | None = None
    agents: tuple[AgentView, ...] = ()
    mcp_servers: tuple[McpServerView, ...] = ()
    sessions: SessionsView = SessionsView()
    dlq_entries: int | None = None  # None: the state store did not answer
    dead_targets: int = 0
    pairing_pending: int | None = None
    state_errors: tuple[str, ...] = ()
    degraded: tuple[DegradedView, ...] = ()
    memory: MemoryView = MemoryView()
    event_loop: LoopView | None = None
    warnings: tuple[str, ...] = ()
    sections: Mapping[str, Any] = field(default_factory=dict)  # a feature's own, as sent

    @classmethod
    def from_json(cls, data: Json) -> StatusSnapshot:
        http, loop = _map(data, "http"), _map(data, "event_loop")
        return cls(
            version=data.get("version"),
            ready=bool(data.get("ready")),
            draining=bool(data.get("draining")),
            uptime_s=data.get("uptime_s", 0),
            http_host=http.get("host"),
            http_port=http.get("port"),
            channels=tuple(ChannelView.from_json(c) for c in _list(data, "channels")),
            cluster=ClusterView.from_json(_map(data, "cluster")) if data.get("cluster") else None,
            breaker=BreakerView.from_json(_map(data, "breaker")) if data.get("breaker") else None,
            agents=tuple(AgentView(**_fields(AgentView, a)) for a in _list(data, "agents")),
            mcp_servers=tuple(McpServerView.from_json(s) for s in _list(data, "mcp_servers")),
            sessions=SessionsView(**_fields(SessionsView, _map(data, "sessions"))),
            dlq_entries=_map(data, "dlq").get("entries"),
            dead_targets=len(data.get("dead_targets") or {}),
            pairing_pending=_map(data, "pairing").get("pending"),
            state_errors=tuple(_list(data, "state_errors")),
            degraded=tuple(
                DegradedView(**_fields(DegradedView, d)) for d in _list(data, "degraded")
            ),
            memory=MemoryView(**_fields(MemoryView, _map(data, "memory"))),
            event_loop=LoopView(**_fields(LoopView, loop)) if loop else None,
            warnings=tuple(_list(data, "warnings")),
            sections={k: data[k] for k in FEATURE_SECTIONS if data.get(k)},
        )
