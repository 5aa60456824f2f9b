"""`chatgate.tracing` over an in-memory exporter: nesting, message roots (new or continued),
content only when captured and never a configured secret, errors by type only, log fields."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider, sampling
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from chatgate import tracing
from chatgate.gateway.logs import _fields

SECRET = "sk-canary-tracing-5521"
CALLER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _install(capture: bool, latest: bool = False) -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    tracing.install(tracer, capture_content=capture, secrets=[SECRET], latest_genai=latest)
    return exporter


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    yield _install(capture=False)
    tracing.uninstall()


def test_off_everything_is_a_no_op() -> None:
    assert not tracing.on()
    assert tracing.start_message("k", "x message") is False
    with tracing.within("k"), tracing.span("anything") as span:
        span.set(a=1)
        span.content("words", text="hello")
        assert span is tracing.OFF
    assert tracing.ids() is None and tracing.current() is tracing.OFF


def test_a_message_is_one_trace_its_turn_nests_under_it(exported: InMemorySpanExporter) -> None:
    assert tracing.start_message("tg:1", "telegram message", chatgate__channel="tg")
    assert tracing.start_message("tg:1", "telegram message") is False  # a duplicate in flight
    with (
        tracing.within("tg:1"),
        tracing.span("chatgate.turn"),
        tracing.span("chat m", kind="client", gen_ai__request__model="m"),
    ):
        ids = tracing.ids()
        line = _fields(logging.LogRecord("x", logging.INFO, "", 0, "m", None, None))
    tracing.finish_message("tg:1", chatgate__reason="ok")
    spans = {s.name: s for s in exported.get_finished_spans()}
    root, turn, chat = spans["telegram message"], spans["chatgate.turn"], spans["chat m"]
    assert root.parent is None and root.attributes["chatgate.reason"] == "ok"
    assert turn.parent.span_id == root.context.span_id
    assert chat.parent.span_id == turn.context.span_id
    assert chat.attributes["gen_ai.request.model"] == "m"
    assert ids == (format(chat.context.trace_id, "032x"), format(chat.context.span_id, "016x"))
    assert (line["trace_id"], line["span_id"]) == ids


def test_a_webhook_traceparent_continues_the_callers_trace(exported: InMemorySpanExporter) -> None:
    with tracing.span("unrelated outer"):  # a schedule's submit: its own trace, whatever runs
        tracing.start_message("a", "webhook message", traceparent=CALLER)
        tracing.start_message("b", "webhook message")
    tracing.finish_message("a")
    tracing.finish_message("b")
    a, b = [s for s in exported.get_finished_spans() if s.name == "webhook message"]
    assert format(a.context.trace_id, "032x") == CALLER.split("-")[1]
    assert a.parent is not None and a.parent.is_remote
    assert b.parent is None


def test_content_only_when_captured_and_never_a_secret(exported: InMemorySpanExporter) -> None:
    with tracing.span("execute_tool t") as span:
        span.content("gen_ai.tool.call.arguments", arguments=f'{{"token": "{SECRET}"}}')
    [quiet] = exported.get_finished_spans()
    capturing = _install(capture=True)
    with tracing.span("execute_tool t") as span:
        span.content("gen_ai.tool.call.arguments", arguments=f'{{"token": "{SECRET}"}}')
    [captured] = capturing.get_finished_spans()
    assert quiet.events == ()
    [event] = captured.events
    assert SECRET not in str(event.attributes) and "***" in event.attributes["arguments"]


def test_an_error_is_recorded_by_type_never_its_text(exported: InMemorySpanExporter) -> None:
    with pytest.raises(ValueError), tracing.span("chat m"):
        raise ValueError(f"the key {SECRET} was refused")
    [span] = exported.get_finished_spans()
    assert span.attributes["error.type"] == "ValueError"
    assert span.status.description == "ValueError" and not span.events
    assert SECRET not in str(span.to_json())


def test_a_timeline_sets_its_stages_and_durations_when_it_closes(
    exported: InMemorySpanExporter,
) -> None:
    ticks = iter([1.0, 1.5, 4.0])
    with tracing.span("chatgate.turn") as turn:
        timeline = tracing.Timeline.of(turn, lambda: next(ticks))
        timeline.mark("open")
        timeline.mark("deliver")
        timeline.close()
    [span] = exported.get_finished_spans()
    assert span.attributes["chatgate.steps"] == ("open", "deliver")
    assert span.attributes["chatgate.steps.duration_s"] == (0.5, 2.5)

    def unread() -> float:
        raise AssertionError("the clock is read while tracing is off")

    idle = tracing.Timeline.of(tracing.OFF, unread)
    idle.mark("open")
    idle.close()


@pytest.mark.parametrize("latest", [False, True])
def test_genai_names_follow_the_opt_in(latest: bool) -> None:
    """By default the current provider name with the deprecated one beside it; opted in to the
    latest experimental conventions, the new name only and the messages in one details event."""
    exporter = _install(capture=True, latest=latest)
    try:
        with tracing.span("chat m", **tracing.genai_provider("openai")) as span:
            tracing.genai_content(span, given='[{"role": "user"}]', answered="hi")
    finally:
        tracing.uninstall()
    [chat] = exporter.get_finished_spans()
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert ("gen_ai.system" in chat.attributes) is not latest
    names = [event.name for event in chat.events]
    if latest:
        assert names == ["gen_ai.client.inference.operation.details"]
        assert chat.events[0].attributes["gen_ai.output.messages"] == "hi"
    else:
        assert names == ["gen_ai.input.messages", "gen_ai.output.messages"]


def test_litellms_own_otel_logger_stays_off() -> None:
    """Only chatgate records a model call: litellm's "otel" logger, were it listed, is dropped."""
    from types import ModuleType

    from chatgate.agents.litellm_import import _no_otel_callback

    fake = ModuleType("litellm")
    keep = object()
    fake.callbacks = ["otel", keep]  # type: ignore[attr-defined]
    fake.success_callback = ["otel"]  # type: ignore[attr-defined]
    fake.failure_callback = []  # type: ignore[attr-defined]
    _no_otel_callback(fake)
    assert fake.callbacks == [keep] and fake.success_callback == []  # type: ignore[attr-defined]


def test_whatsapp_spans_name_the_graph_edge_never_an_id(exported: InMemorySpanExporter) -> None:
    from chatgate.channels.whatsapp.graph import _span

    with tracing.span("whatsapp message"):
        for path in ("1234567/messages", "1234567/media", "998877"):
            with _span(path):
                pass
    with _span("1234567/messages"):  # outside any message: no trace of its own
        pass
    names = [s.name for s in exported.get_finished_spans()]
    assert names == [
        "whatsapp messages",
        "whatsapp media",
        "whatsapp getMedia",
        "whatsapp message",
    ]


def test_an_unsampled_message_builds_no_spans_and_passes_its_context_on() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=sampling.ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider.get_tracer("test"))
    carrier: dict[str, str] = {}
    try:
        assert tracing.start_message("tg:2", "telegram message", chatgate__channel="tg")
        with tracing.within("tg:2"):
            context = trace.get_current_span().get_span_context()
            with (
                tracing.span("chatgate.turn") as turn,
                tracing.span("chat m", kind="client") as chat,
            ):
                assert turn is tracing.OFF and chat is tracing.OFF  # nothing built below
                tracing.inject(carrier)
        tracing.finish_message("tg:2", chatgate__reason="text")
    finally:
        tracing.uninstall()
    assert exporter.get_finished_spans() == ()
    # an MCP server or a webhook's caller still sees the message's trace, marked unsampled
    _, trace_id, span_id, flags = carrier["traceparent"].split("-")
    assert (trace_id, span_id) == (f"{context.trace_id:032x}", f"{context.span_id:016x}")
    assert not int(flags, 16) & 1  # not sampled
