"""Leaf spans: a span under a recording one that nothing runs inside (a journal write, a model
call), recorded without the SDK's span machinery.

The SDK spends about 0.3 M instructions on every span it makes: a sampler, an attribute map that
validates each value under a lock, two bounded lists, a span processor fan-out, a copy for the
processor. A leaf needs none of that: it is sampled because its parent is, its attributes are
chatgate's own, and it is never the current span (nothing nests under it). It collects what it
is given in a plain dict and, when it ends, hands the SDK's public `ReadableSpan` (what every
span processor and exporter receives) to the span processor, which exports it with the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from random import getrandbits
from time import time_ns
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode

_UNSET = Status(StatusCode.UNSET)


class Leaves:
    """Makes leaf spans of ``provider``'s tracer ``scope`` for ``ended`` (the provider's span
    processor's ``on_end``)."""

    __slots__ = ("ended", "provider", "scope")

    def __init__(
        self,
        ended: Callable[[ReadableSpan], None],
        provider: TracerProvider,
        scope: InstrumentationScope,
    ) -> None:
        self.ended, self.provider, self.scope = ended, provider, scope

    def start(
        self, name: str, kind: SpanKind, parent: SpanContext, attributes: dict[str, Any]
    ) -> LeafSpan:
        """A span named ``name`` under ``parent`` (a recording span's context), started now."""
        return LeafSpan(self, name, kind, parent, attributes)


class LeafSpan:
    """The part of the span API chatgate's `tracing.Span` uses, recorded into a plain dict."""

    __slots__ = (
        "_attributes",
        "_context",
        "_events",
        "_kind",
        "_leaves",
        "_name",
        "_parent",
        "_start",
        "_status",
    )

    def __init__(
        self,
        leaves: Leaves,
        name: str,
        kind: SpanKind,
        parent: SpanContext,
        attributes: dict[str, Any],
    ) -> None:
        self._leaves, self._name, self._kind, self._parent = leaves, name, kind, parent
        self._attributes = {k: _frozen(v) for k, v in attributes.items()}
        self._events: list[Event] = []
        self._status = _UNSET
        span_id = getrandbits(64) or 1
        self._context = SpanContext(
            parent.trace_id, span_id, False, parent.trace_flags, parent.trace_state
        )
        self._start = time_ns()

    def get_span_context(self) -> SpanContext:
        return self._context

    def is_recording(self) -> bool:
        return True

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        for key, value in attributes.items():
            self._attributes[key] = _frozen(value)

    def set_attribute(self, key: str, value: Any) -> None:
        self._attributes[key] = _frozen(value)

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        frozen = {k: _frozen(v) for k, v in (attributes or {}).items()}
        self._events.append(Event(name, frozen))

    def set_status(self, status: Status) -> None:
        self._status = status

    def end(self) -> None:
        leaves = self._leaves
        leaves.ended(
            ReadableSpan(
                name=self._name,
                context=self._context,
                parent=self._parent,
                resource=leaves.provider.resource,  # as the provider's spans (after a fork too)
                attributes=self._attributes,
                events=self._events,
                kind=self._kind,
                status=self._status,
                start_time=self._start,
                end_time=time_ns(),
                instrumentation_scope=leaves.scope,
            )
        )


def _frozen(value: Any) -> Any:
    """A list value as the tuple the SDK would keep (a caller's list may change after)."""
    return tuple(value) if isinstance(value, list) else value
