"""Prometheus metrics, labelled by channel and reason code. One registry per gateway instance."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

_LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.002,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1,
    2.5,
    5,
    10,
    30,
    60,
)


class _Cached:
    """A labelled metric whose children are cached: prometheus' labels() costs ~10 µs a call,
    and the message path calls it several times per turn (label sets are few and bounded)."""

    __slots__ = ("_children", "metric")

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self._children: dict[tuple[tuple[str, str], ...], Any] = {}

    def labels(self, **values: str) -> Any:
        key = tuple(values.items())  # a call site's keyword order is fixed: no sort needed
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = self.metric.labels(**values)
        return child


def _cached(metric: Any) -> Any:
    return _Cached(metric)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.inbound = _cached(
            Counter(
                "chatgate_inbound_total", "Messages accepted from channels", ["channel"], registry=r
            )
        )
        self.admission = _cached(
            Counter(
                "chatgate_admission_total", "Admission decisions", ["channel", "reason"], registry=r
            )
        )
        self.dropped = _cached(
            Counter(
                "chatgate_dropped_total",
                "Messages that never reached a turn",
                ["channel", "stage", "reason"],
                registry=r,
            )
        )
        self.ignored = _cached(
            Counter(
                "chatgate_ignored_total",
                "Platform events that were not messages for the bot (edits, joins, own messages)",
                ["channel", "reason"],
                registry=r,
            )
        )
        self.media = _cached(
            Counter(
                "chatgate_media_total",
                "Attachments by what became of them (media reason codes)",
                ["channel", "kind", "reason"],
                registry=r,
            )
        )
        self.turns = _cached(
            Counter(
                "chatgate_turns_total",
                "Agent turns by outcome",
                ["agent", "outcome", "reason"],
                registry=r,
            )
        )
        self.turn_seconds = _cached(
            Histogram(
                "chatgate_turn_seconds",
                "Agent time per turn",
                ["agent"],
                buckets=_LATENCY_BUCKETS,
                registry=r,
            )
        )
        self.handoff_seconds = Histogram(
            "chatgate_handoff_seconds",
            "Answers handed off between replicas: hand-off → sent by the channel's holder",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.overhead_seconds = Histogram(
            "chatgate_overhead_seconds",
            "Gateway time per turn excluding the agent (accepted → first send)",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.delivery = _cached(
            Counter(
                "chatgate_delivery_total",
                "Reply deliveries",
                ["channel", "status", "kind"],
                registry=r,
            )
        )
        self.send_retries = _cached(
            Counter(
                "chatgate_send_retries_total",
                "Send retries by error kind",
                ["channel", "kind"],
                registry=r,
            )
        )
        self.degraded = _cached(
            Counter(
                "chatgate_presentation_degraded_total",
                "Presentation degradations",
                ["channel", "reason"],
                registry=r,
            )
        )
        self.fallbacks = _cached(
            Counter(
                "chatgate_model_fallback_total", "Model fallbacks", ["agent", "reason"], registry=r
            )
        )
        self.persist_failed = Counter(
            "chatgate_session_persist_failed_total",
            "Transcript writes that spilled to a file",
            registry=r,
        )
        self.webhook = _cached(
            Counter(
                "chatgate_webhook_requests_total",
                "Webhook requests by route and result",
                ["route", "result"],
                registry=r,
            )
        )
        self.events = _cached(
            Counter(
                "chatgate_channel_events_total", "Adapter events", ["metric", "channel"], registry=r
            )
        )
        self.warm_sessions = Gauge("chatgate_warm_sessions", "Sessions held in memory", registry=r)
        self.active_turns = Gauge("chatgate_active_turns", "Turns running now", registry=r)
        self.dlq_size = Gauge(
            "chatgate_dlq_entries", "Entries in the dead-letter queue", registry=r
        )
        self.channel_up = _cached(
            Gauge("chatgate_channel_up", "1 when the channel is running", ["channel"], registry=r)
        )
        self.channel_state = _cached(
            Gauge(
                "chatgate_channel_state",
                "1 for the channel's current state",
                ["channel", "state"],
                registry=r,
            )
        )
        self.channel_restarts = _cached(
            Counter(
                "chatgate_channel_restarts_total",
                "Channel restarts by the supervisor",
                ["channel"],
                registry=r,
            )
        )
        self.breaker_tripped = Gauge(
            "chatgate_fleet_breaker_tripped", "1 while channel restarts are on hold", registry=r
        )
        self.degraded_owners = _cached(
            Gauge("chatgate_degraded_owners", "Degraded owners by kind", ["kind"], registry=r)
        )
        self.memory_rss = Gauge("chatgate_memory_rss_bytes", "Anonymous RSS", registry=r)
        self.memory_limit = Gauge(
            "chatgate_memory_limit_bytes", "Memory limit (0 = unknown)", registry=r
        )
        self.evictions = Counter(
            "chatgate_session_evictions_total", "Warm sessions evicted under pressure", registry=r
        )
        self.loop_lag = Gauge(
            "chatgate_event_loop_lag_seconds", "Measured event-loop lag", registry=r
        )
        self.reloads = _cached(
            Counter(
                "chatgate_config_reloads_total", "Config reloads by result", ["result"], registry=r
            )
        )

    def count(self, metric: str, **labels: str) -> None:
        """Generic adapter counter (e.g. poller_rebuilt) without each adapter owning a registry."""
        self.events.labels(metric=metric, channel=labels.get("channel", "")).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
