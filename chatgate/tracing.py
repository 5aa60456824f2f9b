"""Spans along the message path: a thin layer over the OpenTelemetry API for the call sites.

While tracing is off (the default) every helper returns a shared no-op at the cost of one global
read, and OpenTelemetry is not even imported; the telemetry feature `install`s a tracer when
export is configured. Spans nest through OpenTelemetry's context (contextvars), so a span opened
inside another, in the same task or a task created inside it, is its child. A message's root span
is kept by the replica and message key (`keyed`), so the turn that runs later in a session worker
continues it. The steps of a turn are attributes of its span (`Timeline`), not spans: a span is
the SDK's costliest unit (built on the loop, encoded on the export thread).

Content (message text, prompts, answers, tool arguments) is recorded only through `content`,
which drops it unless the operator enabled `capture_content`; errors are recorded by type only
(an exception's text may quote a secret or the user's words).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from types import SimpleNamespace
from typing import Any

Attr = str | int | float | bool | list[str] | list[float] | tuple[str, ...] | None

TRACE_ID = "trace_id"  # InboundMessage.extra key: the message's trace, journaled for `why`
# InboundMessage.extra key: the message's root span (W3C traceparent), journaled so a replica
# that adopts the message links its own trace to this one
TRACE_PARENT = "trace_parent"

_tracer: Any = None  # an opentelemetry Tracer while tracing is on
_capture = False
_secrets: tuple[str, ...] = ()  # masked out of captured content
_roots: dict[str, Any] = {}  # `keyed` message key → its root span (open until the message ends)
_otel: Any = None  # the OpenTelemetry API functions the hot paths call, bound at install
_latest_genai = False  # OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental
_own: Any = None  # makes spans without the SDK's span machinery (telemetry.own.OwnSpans)


def install(
    tracer: Any,
    *,
    capture_content: bool = False,
    secrets: Iterable[str] = (),
    latest_genai: bool = False,
    own: Any = None,
) -> None:
    """Switch tracing on with ``tracer`` (an OpenTelemetry Tracer); ``secrets`` never appear in
    captured content; ``latest_genai``: the operator opted in to the latest experimental GenAI
    conventions; ``own``: what makes message roots and the spans under them without the SDK's
    span machinery (None: the tracer makes them)."""
    global _tracer, _capture, _secrets, _otel, _latest_genai, _own
    _latest_genai, _own = latest_genai, own
    from opentelemetry import context, trace

    _otel = SimpleNamespace(
        attach=context.attach,
        detach=context.detach,
        set_span_in_context=trace.set_span_in_context,
        get_current_span=trace.get_current_span,
        empty=context.Context(),
        kinds={kind.name.lower(): kind for kind in trace.SpanKind},
    )
    _tracer, _capture = tracer, capture_content
    _secrets = tuple(sorted((s for s in secrets if s), key=len, reverse=True))


def uninstall() -> None:
    """Back to no-ops; open message spans are ended (the process is stopping)."""
    global _tracer, _capture, _own
    for span in _roots.values():
        span.end()
    _roots.clear()
    _tracer, _capture, _own = None, False, None


def on() -> bool:
    return _tracer is not None


def capturing() -> bool:
    """Content is recorded (worth serializing only then)."""
    return _tracer is not None and _capture


class Span:
    """A recording span: attributes, content (when captured), the error type."""

    __slots__ = ("_span",)

    def __init__(self, span: Any) -> None:
        self._span = span

    def set(self, **attributes: Attr) -> None:
        self._span.set_attributes(_attrs(attributes))  # one call: the SDK locks once

    def event(self, name: str, **attributes: Attr) -> None:
        self._span.add_event(name, _attrs(attributes))

    def content(self, name: str, **attributes: Attr) -> None:
        """An event with the words themselves: recorded only when content capture is on."""
        if _capture:
            self.event(name, **{k: _masked(v) for k, v in attributes.items()})

    def fail(self, error: BaseException | str) -> None:
        from opentelemetry.trace import Status, StatusCode

        kind = error if isinstance(error, str) else type(error).__qualname__
        self._span.set_attribute("error.type", kind)
        self._span.set_status(Status(StatusCode.ERROR, kind))


class _Off(Span):
    """The span handed out while tracing is off: every method does nothing."""

    __slots__ = ()

    def set(self, **attributes: Attr) -> None:
        pass

    def event(self, name: str, **attributes: Attr) -> None:
        pass

    def content(self, name: str, **attributes: Attr) -> None:
        pass

    def fail(self, error: BaseException | str) -> None:
        pass


OFF = _Off(None)


class Timeline:
    """The stages of a span's work with how long each took, set as two attributes when it
    closes (``chatgate.steps``, ``chatgate.steps.duration_s``): a turn's steps cost two
    attributes rather than a span or an event each."""

    __slots__ = ("_names", "_now", "_span", "_starts")

    def __init__(self, span: Span, now: Callable[[], float]) -> None:
        self._span, self._now = span, now
        self._names: list[str] = []
        self._starts: list[float] = []

    @staticmethod
    def of(span: Span, now: Callable[[], float]) -> Timeline:
        """A timeline for ``span``; the shared no-op one while ``span`` records nothing."""
        return _NO_TIMELINE if span is OFF else Timeline(span, now)

    def mark(self, name: str) -> None:
        """Stage ``name`` starts now (the one before it ends)."""
        self._names.append(name)
        self._starts.append(self._now())

    def close(self) -> None:
        if not self._names:
            return
        starts = self._starts
        ends = [*starts[1:], self._now()]
        took = [round(end - start, 6) for start, end in zip(starts, ends, strict=True)]
        self._span.set(chatgate__steps=tuple(self._names), chatgate__steps__duration_s=took)
        self._names = []


class _NoTimeline(Timeline):
    __slots__ = ()

    def mark(self, name: str) -> None:
        pass

    def close(self) -> None:
        pass


_NO_TIMELINE = _NoTimeline(OFF, lambda: 0.0)


class _Nothing:
    """The context manager handed out while tracing is off (one shared object, no generator)."""

    __slots__ = ()

    def __enter__(self) -> Span:
        return OFF

    def __exit__(self, *exc: object) -> None:
        return None


NOTHING = _Nothing()


def span(
    name: str,
    *,
    kind: str = "internal",
    inside: bool = False,
    leaf: bool = False,
    **attributes: Attr,
) -> AbstractContextManager[Span]:
    """A child of the current span for the duration of the block; a raised error marks it.
    ``inside``: only within a trace (a platform's long poll outside any message starts none).
    ``leaf``: no span is opened inside the block, so this one is never made current (log lines
    name its parent). Under a recording span it is chatgate's own (`telemetry.own`: a fifth of
    what the SDK's costs); nothing is built under a message the sampler left out (its spans
    would record nothing)."""
    if _tracer is None:
        return NOTHING
    current = _otel.get_current_span()
    parent = current.get_span_context()
    if parent.is_valid:
        if not current.is_recording():
            return NOTHING  # an unsampled message: its trace context is passed on as it is
        if _own is not None:
            return _Own(name, _kind(kind), attributes, parent, not leaf)
    elif inside:
        return NOTHING
    return _Active(name, _kind(kind), attributes)


class _Own:
    """One of chatgate's own spans for a block: started on entering, ended on leaving, the
    current span meanwhile unless it is a leaf."""

    __slots__ = ("_attributes", "_current", "_kind", "_name", "_parent", "_span", "_token")

    def __init__(
        self, name: str, kind: Any, attributes: Mapping[str, Attr], parent: Any, current: bool
    ) -> None:
        self._name, self._kind, self._attributes, self._parent = name, kind, attributes, parent
        self._current = current

    def __enter__(self) -> Span:
        made = _own.start(self._name, self._kind, self._parent, _attrs(self._attributes))
        self._span = made
        if self._current:
            self._token = _otel.attach(_otel.set_span_in_context(made))
        return Span(made)

    def __exit__(self, kind: object, error: object, tb: object) -> None:
        if isinstance(error, BaseException):
            Span(self._span).fail(error)
        if self._current:
            _otel.detach(self._token)
        self._span.end()


class _Active:
    """A span made current for a block: one plain object instead of the SDK's two generator
    context managers, since a message opens several."""

    __slots__ = ("_attributes", "_kind", "_name", "_span", "_token")

    def __init__(self, name: str, kind: Any, attributes: Mapping[str, Attr]) -> None:
        self._name, self._kind, self._attributes = name, kind, attributes

    def __enter__(self) -> Span:
        made = _tracer.start_span(self._name, kind=self._kind, attributes=_attrs(self._attributes))
        self._span = made
        self._token = _otel.attach(_otel.set_span_in_context(made))
        return Span(made)

    def __exit__(self, kind: object, error: object, tb: object) -> None:
        if isinstance(error, BaseException):
            Span(self._span).fail(error)
        _otel.detach(self._token)
        self._span.end()


class _Current:
    """Makes an open span (a message's root) the current one for a block, without ending it."""

    __slots__ = ("_span", "_token")

    def __init__(self, span: Any) -> None:
        self._span = span

    def __enter__(self) -> object:
        self._token = _otel.attach(_otel.set_span_in_context(self._span))
        return self._span

    def __exit__(self, *exc: object) -> None:
        _otel.detach(self._token)


def keyed(owner: str, key: str) -> str:
    """Message ``key`` among the kept roots, per replica ``owner``: two replicas in one process
    (as in the tests) each keep their own root of a message one hands to the other."""
    return key if _tracer is None else f"{owner}|{key}"


def start_message(
    key: str, name: str, *, traceparent: Any = None, link: Any = None, **attributes: Attr
) -> bool:
    """Open the root span of an inbound message (a new trace, or the caller's when a W3C
    ``traceparent`` came with it) and keep it under ``key`` until `finish_message`; ``link``: the
    traceparent of an earlier trace of the same message (another replica's), linked to. False
    when tracing is off or ``key`` already has one (a duplicate of a message in flight)."""
    tracer = _tracer
    if tracer is None or key in _roots:
        return False
    parent = _otel.empty
    if isinstance(traceparent, str):
        parent = _extracted(traceparent)
    links = None
    if isinstance(link, str):
        from opentelemetry.trace import Link

        earlier = _otel.get_current_span(_extracted(link)).get_span_context()
        links = [Link(earlier)] if earlier.is_valid else None
    if _own is not None:
        _roots[key] = _own.root(name, _kind("consumer"), parent, _attrs(attributes), links or ())
        return True
    _roots[key] = tracer.start_span(
        name, context=parent, kind=_kind("consumer"), attributes=_attrs(attributes), links=links
    )
    return True


def journaled(key: str) -> dict[str, str]:
    """What the journal keeps of open message ``key``'s trace when it is recorded (sampled):
    its trace id (`chatgate why` prints it) and its root's traceparent (an adopter links it)."""
    root = _roots.get(key)
    if root is None:
        return {}
    context = root.get_span_context()
    if not context.trace_flags.sampled:
        return {}
    trace = format(context.trace_id, "032x")
    parent = f"00-{trace}-{context.span_id:016x}-{int(context.trace_flags):02x}"
    return {TRACE_ID: trace, TRACE_PARENT: parent}


def _extracted(traceparent: str) -> Any:
    from opentelemetry.propagate import extract

    return extract({"traceparent": traceparent})


def finish_message(key: str, **attributes: Attr) -> None:
    """End the root span of ``key`` with its outcome (stage and reason code)."""
    root = _roots.pop(key, None)
    if root is not None:
        Span(root).set(**attributes)
        root.end()


def genai_provider(name: str) -> dict[str, Any]:
    """A GenAI span's provider: ``gen_ai.provider.name``, with the deprecated ``gen_ai.system``
    beside it for backends built on the older conventions, unless the operator opted in to the
    latest experimental ones (which emit the new name only)."""
    if _latest_genai:
        return {"gen_ai__provider__name": name}
    return {"gen_ai__provider__name": name, "gen_ai__system": name}


def genai_content(span: Span, *, given: str, answered: str) -> None:
    """A model call's messages, when content is captured: as the latest experimental conventions
    place them (one ``gen_ai.client.inference.operation.details`` event) when opted in, else as
    one event each for what the model was given and what it answered."""
    if not _capture:
        return
    if _latest_genai:
        span.content(
            "gen_ai.client.inference.operation.details",
            gen_ai__input__messages=given,
            gen_ai__output__messages=answered,
        )
        return
    span.content("gen_ai.input.messages", messages=given)
    span.content("gen_ai.output.messages", text=answered)


def current() -> Span:
    """The current span (`OFF` when tracing is off)."""
    if _tracer is None:
        return OFF
    found = _otel.get_current_span()
    return Span(found) if found.is_recording() else OFF


def message(key: str) -> Span:
    """The root span of an open message (`OFF` when none is kept)."""
    root = _roots.get(key)
    return OFF if root is None else Span(root)


def within(key: str) -> AbstractContextManager[object]:
    """Make the root span of message ``key`` the current span for the block."""
    root = _roots.get(key) if _tracer is not None else None
    if root is None:
        return NOTHING
    return _Current(root)


def ids() -> tuple[str, str] | None:
    """(trace id, span id) in hex of the current span, for log lines; None when off or none."""
    if _tracer is None:
        return None
    context = _otel.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def inject(carrier: dict[str, Any]) -> None:
    """Add the current trace context (traceparent, tracestate) to ``carrier``."""
    if _tracer is not None:
        from opentelemetry.propagate import inject as otel_inject

        otel_inject(carrier)


def _masked(value: Attr) -> Attr:
    if not isinstance(value, str):
        return value
    for secret in _secrets:
        value = value.replace(secret, "***")
    return value


def _kind(kind: str) -> Any:
    return _otel.kinds[kind]


_NAMES: dict[str, str] = {}  # keyword name → dotted attribute name, as met


def _dotted(key: str) -> str:
    """Keyword names stand for dotted attribute names: gen_ai__request__model → gen_ai.request.model."""
    name = _NAMES.get(key)
    if name is None:
        name = _NAMES[key] = key.replace("__", ".")
    return name


def _attrs(attributes: Mapping[str, Attr]) -> dict[str, Any]:
    """Attributes by dotted name, None dropped, a list as the tuple the SDK keeps (a caller's
    list may change after)."""
    names, out = _NAMES, {}
    for key, value in attributes.items():
        if value is not None:
            # a call only for a name not yet met
            out[names.get(key) or _dotted(key)] = tuple(value) if type(value) is list else value
    return out
