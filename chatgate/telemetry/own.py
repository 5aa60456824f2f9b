"""chatgate's own spans: its message roots, turns and the spans under them, recorded without the
SDK's span machinery.

The SDK spends about 0.2 M instructions on every span it makes: an attribute map that validates
each value (each element of a list) under a lock, two bounded lists, a span processor fan-out, a
copy for the processor, its own metrics hooks. chatgate's spans need none of that: their
attributes are chatgate's own, a child is sampled because its parent is, and a root asks the
provider's sampler once, as the SDK would. An `OwnSpan` implements the OpenTelemetry API's
`Span`, so it can be the current span (the spans the MCP SDK makes nest under it); it collects
what it is given in a plain dict and, when it ends, hands the SDK's public `ReadableSpan` (what
every span processor and exporter receives) to the provider's span processor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from random import getrandbits
from time import time_ns
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.sampling import Decision
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    get_current_span,
)

_UNSET = Status(StatusCode.UNSET)
_RANDOM = getattr(TraceFlags, "RANDOM_TRACE_ID", 0)  # W3C level 2, where the API knows it


class OwnSpans:
    """Makes chatgate's spans for ``provider``'s tracer ``scope``, ending into ``ended`` (the
    provider's span processor's ``on_end``)."""

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
    ) -> OwnSpan:
        """A span named ``name`` under ``parent`` (a recording span's context), started now;
        ``attributes`` becomes its own (lists already made tuples)."""
        context = SpanContext(
            parent.trace_id, getrandbits(64) or 1, False, parent.trace_flags, parent.trace_state
        )
        return OwnSpan(self, name, kind, context, parent, attributes)

    def root(
        self,
        name: str,
        kind: SpanKind,
        parent: Context,
        attributes: dict[str, Any],
        links: Sequence[Link] = (),
    ) -> Span:
        """A message's root span: a new trace, or the remote caller's in ``parent``, as the
        provider's sampler decides (a span that records nothing when it drops the trace);
        ``attributes`` as for `start`."""
        above: SpanContext | None = get_current_span(parent).get_span_context()
        if above is not None and not above.is_valid:
            above = None
        made = self.provider
        trace_id = above.trace_id if above is not None else made.id_generator.generate_trace_id()
        decided = made.sampler.should_sample(parent, trace_id, name, kind, attributes, links)
        sampled = decided.decision is Decision.RECORD_AND_SAMPLE
        flags = TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT
        if above is None:
            flags |= _RANDOM if getattr(made.id_generator, "is_trace_id_random", _no)() else 0
        else:
            flags |= above.trace_flags & _RANDOM
        context = SpanContext(
            trace_id, made.id_generator.generate_span_id(), False, TraceFlags(flags),
            decided.trace_state,
        )  # fmt: skip
        if decided.decision is Decision.DROP:
            return NonRecordingSpan(context)
        return OwnSpan(self, name, kind, context, above, dict(decided.attributes or {}), links)


def _no() -> bool:
    return False


class OwnSpan(Span):
    """A recording span of chatgate's, its attributes in a plain dict until it ends."""

    __slots__ = (
        "_attributes",
        "_context",
        "_end",
        "_events",
        "_kind",
        "_links",
        "_made",
        "_name",
        "_parent",
        "_start",
        "_status",
    )

    def __init__(
        self,
        made: OwnSpans,
        name: str,
        kind: SpanKind,
        context: SpanContext,
        parent: SpanContext | None,
        attributes: dict[str, Any],
        links: Sequence[Link] = (),
    ) -> None:
        self._made, self._name, self._kind, self._parent = made, name, kind, parent
        self._context = context
        self._attributes = attributes
        self._events: list[Event] = []
        self._links = list(links)
        self._status = _UNSET
        self._start = time_ns()
        self._end: int | None = None

    def get_span_context(self) -> SpanContext:
        return self._context

    def is_recording(self) -> bool:
        return self._end is None

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        kept = self._attributes
        for key, value in attributes.items():
            kept[key] = tuple(value) if isinstance(value, list) else value

    def set_attribute(self, key: str, value: Any) -> None:
        self._attributes[key] = _frozen(value)

    def add_event(
        self,
        name: str,
        attributes: Mapping[str, Any] | None = None,
        timestamp: int | None = None,
    ) -> None:
        frozen = {k: _frozen(v) for k, v in (attributes or {}).items()}
        self._events.append(Event(name, frozen, timestamp))

    def add_link(self, context: SpanContext, attributes: Mapping[str, Any] | None = None) -> None:
        if context.is_valid:
            self._links.append(Link(context, attributes))

    def update_name(self, name: str) -> None:
        self._name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self._status.status_code is StatusCode.OK:
            return  # final, as in the SDK
        self._status = status if isinstance(status, Status) else Status(status, description)

    def record_exception(
        self,
        exception: BaseException,
        attributes: Mapping[str, Any] | None = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """An ``exception`` event naming its type only: its text may quote a secret or the
        user's words."""
        described = {"exception.type": type(exception).__qualname__, **(attributes or {})}
        self.add_event("exception", described, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self._end is not None:
            return
        self._end = end = end_time or time_ns()
        made = self._made
        made.ended(
            _Ended(
                name=self._name,
                context=self._context,
                parent=self._parent,
                resource=made.provider.resource,  # as the provider's spans (after a fork too)
                attributes=self._attributes,
                events=self._events,
                links=self._links,
                kind=self._kind,
                status=self._status,
                start_time=self._start,
                end_time=end,
                instrumentation_scope=made.scope,
            )
        )


class _Ended(ReadableSpan):
    """An own span as the span processor receives it: it drops nothing (no limits apply), so
    the writer asks no bounded collection what it dropped."""

    dropped_attributes = 0
    dropped_events = 0
    dropped_links = 0


def _frozen(value: Any) -> Any:
    """A list value as the tuple the SDK would keep (a caller's list may change after)."""
    return tuple(value) if isinstance(value, list) else value
