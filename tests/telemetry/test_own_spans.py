"""chatgate's own spans (recorded without the SDK's span machinery) and the deque span processor:
a message root, a turn made current and a leaf land in one trace with what the SDK would have
recorded, spans the SDK makes under them nest; the processor exports in batches, drops beyond
its queue and flushes on shutdown."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider, sampling
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanKind, StatusCode

from chatgate import tracing
from chatgate.telemetry.batch import DequeSpanProcessor, from_env
from chatgate.telemetry.own import OwnSpans
from chatgate.telemetry.wire import SpanWriter

SCOPE = InstrumentationScope("chatgate", "1.0", "https://opentelemetry.io/schemas/1.37.0")


@pytest.fixture
def exported() -> Iterator[tuple[InMemorySpanExporter, DequeSpanProcessor]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "chatgate"}))
    processor = DequeSpanProcessor(exporter, queue=100)
    provider.add_span_processor(processor)
    own = OwnSpans(processor.on_end, provider, SCOPE)
    tracing.install(provider.get_tracer("chatgate", "1.0"), own=own)
    yield exporter, processor
    tracing.uninstall()
    processor.shutdown()


def _spans(found: tuple[InMemorySpanExporter, DequeSpanProcessor]) -> dict[str, ReadableSpan]:
    exporter, processor = found
    assert processor.force_flush()
    return {s.name: s for s in exporter.get_finished_spans()}


def test_a_leaf_is_a_child_of_the_current_span_with_its_attributes(
    exported: tuple[InMemorySpanExporter, DequeSpanProcessor],
) -> None:
    with tracing.span("chatgate.turn"):
        turn_ids = tracing.ids()
        with tracing.span(
            "chat m", kind="client", leaf=True, gen_ai__request__model="m", skipped=None
        ) as span:
            assert tracing.ids() == turn_ids  # never current: log lines name its parent
            steps = ["stop"]
            span.set(gen_ai__response__finish_reasons=steps, gen_ai__usage__input_tokens=3)
            steps.append("later")  # kept as it was when set, as the SDK keeps it
            span.event("retry", attempt=1)
    spans = _spans(exported)
    turn, chat = spans["chatgate.turn"], spans["chat m"]
    assert chat.parent == turn.context and chat.context.trace_id == turn.context.trace_id
    assert chat.context.span_id not in (0, turn.context.span_id)
    assert chat.context.trace_flags.sampled and not chat.context.is_remote
    assert dict(chat.attributes or {}) == {
        "gen_ai.request.model": "m",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 3,
    }
    assert chat.kind is SpanKind.CLIENT and chat.status.status_code is StatusCode.UNSET
    assert [(e.name, dict(e.attributes or {})) for e in chat.events] == [("retry", {"attempt": 1})]
    assert chat.resource is turn.resource and chat.instrumentation_scope == SCOPE
    assert turn.start_time is not None and chat.start_time is not None
    assert turn.start_time <= chat.start_time <= (chat.end_time or 0) <= (turn.end_time or 0)


def test_a_leaf_that_raises_is_an_error_by_type(
    exported: tuple[InMemorySpanExporter, DequeSpanProcessor],
) -> None:
    with (
        pytest.raises(TimeoutError),
        tracing.span("chatgate.turn"),
        tracing.span("chatgate.journal", leaf=True),
    ):
        raise TimeoutError("sk-secret in the text")
    journal = _spans(exported)["chatgate.journal"]
    assert journal.status.status_code is StatusCode.ERROR
    assert journal.status.description == "TimeoutError"
    assert (journal.attributes or {})["error.type"] == "TimeoutError"


def test_a_leaf_outside_any_trace_is_a_root_the_tracer_makes(
    exported: tuple[InMemorySpanExporter, DequeSpanProcessor],
) -> None:
    with tracing.span("chatgate.journal", leaf=True):
        pass
    journal = _spans(exported)["chatgate.journal"]
    assert journal.parent is None and journal.context.trace_flags.sampled


def test_leaves_write_the_same_request_bytes_as_sdk_spans(
    exported: tuple[InMemorySpanExporter, DequeSpanProcessor],
) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    with tracing.span("chatgate.turn"), tracing.span("chat m", leaf=True, a=["x"], b=[0.5]):
        pass
    spans = list(_spans(exported).values())
    assert SpanWriter().request(spans) == encode_spans(spans).SerializeToString()


class _Counting(SpanExporter):
    def __init__(self) -> None:
        self.batches: list[int] = []
        self.stopped = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.batches.append(len(spans))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.stopped = True


def _ended(n: int) -> list[ReadableSpan]:
    return [ReadableSpan(f"s{i}") for i in range(n)]


def test_the_processor_drops_beyond_its_queue_and_flushes_on_shutdown() -> None:
    exporter = _Counting()
    processor = DequeSpanProcessor(exporter, queue=5, batch=10, delay_s=3600)
    for span in _ended(7):
        processor.on_end(span)
    assert processor.dropped == 2
    assert processor.force_flush() and exporter.batches == [5]
    processor.on_end(ReadableSpan("last"))
    processor.shutdown()
    assert exporter.batches == [5, 1] and exporter.stopped


def test_the_processor_exports_at_most_a_batch_per_request() -> None:
    exporter = _Counting()
    processor = DequeSpanProcessor(exporter, queue=100, batch=2, delay_s=3600)
    for span in _ended(5):
        processor.on_end(span)  # a full batch wakes the thread
    processor.shutdown()
    assert sum(exporter.batches) == 5 and max(exporter.batches) == 2


def test_the_processor_reads_the_sdk_batch_settings() -> None:
    env = {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "3", "OTEL_BSP_SCHEDULE_DELAY": "bogus"}
    processor = from_env(_Counting(), env, None)
    try:
        for span in _ended(3):
            processor.on_end(span)
        assert processor.dropped == 0 and processor.force_flush()
    finally:
        processor.shutdown()


class _Starts(SpanProcessor):
    """Names the spans the SDK starts (it calls ``on_start`` for each; chatgate's own spans it
    never sees before they end)."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.started.append(span.name)


@dataclass
class Own:
    exporter: InMemorySpanExporter
    processor: DequeSpanProcessor
    provider: TracerProvider
    starts: _Starts

    def spans(self) -> dict[str, ReadableSpan]:
        return _spans((self.exporter, self.processor))


@pytest.fixture
def own() -> Iterator[Own]:
    provider = TracerProvider(
        resource=Resource({"service.name": "chatgate"}),
        sampler=sampling.ParentBased(sampling.ALWAYS_ON),
    )
    found = Own(InMemorySpanExporter(), None, provider, _Starts())  # type: ignore[arg-type]
    found.processor = DequeSpanProcessor(found.exporter, queue=100)
    provider.add_span_processor(found.starts)
    provider.add_span_processor(found.processor)
    made = OwnSpans(found.processor.on_end, provider, SCOPE)
    tracing.install(provider.get_tracer("chatgate", "1.0"), own=made)
    yield found
    tracing.uninstall()
    provider.shutdown()


def test_a_messages_root_and_turn_are_chatgates_own_and_sdk_spans_nest_under_them(
    own: Own,
) -> None:
    assert tracing.start_message("tg:1", "telegram message", chatgate__channel="tg")
    with tracing.within("tg:1"), tracing.span("chatgate.turn", gen_ai__agent__name="a"):
        turn_ids = tracing.ids()
        with tracing.span("chat m", kind="client", leaf=True):
            pass
        # a span the SDK makes under the current one, as the MCP SDK's `tools/call`
        with own.provider.get_tracer("mcp").start_as_current_span("tools/call"):
            tool_ids = tracing.ids()
    tracing.finish_message("tg:1", chatgate__reason="text")
    spans = own.spans()
    root, turn = spans["telegram message"], spans["chatgate.turn"]
    chat, tool = spans["chat m"], spans["tools/call"]
    assert own.starts.started == ["tools/call"]  # the SDK made the MCP SDK's span only
    assert root.parent is None and root.kind is SpanKind.CONSUMER
    assert dict(root.attributes or {}) == {"chatgate.channel": "tg", "chatgate.reason": "text"}
    assert turn.parent == root.context and chat.parent == turn.context
    assert tool.parent == turn.context
    assert {s.context.trace_id for s in spans.values()} == {root.context.trace_id}
    assert turn_ids == (f"{turn.context.trace_id:032x}", f"{turn.context.span_id:016x}")
    assert tool_ids == (f"{tool.context.trace_id:032x}", f"{tool.context.span_id:016x}")
    assert root.context.trace_flags == turn.context.trace_flags == tool.context.trace_flags
    assert root.context.trace_flags.sampled


def test_a_root_continues_a_callers_trace_as_the_sampler_decides(own: Own) -> None:
    sampled, dropped = (f"00-{'ab' * 16}-{'cd' * 8}-{flags}" for flags in ("01", "00"))
    tracing.start_message("w:1", "webhook message", traceparent=sampled)
    tracing.start_message("w:2", "webhook message", traceparent=dropped)
    assert tracing.journaled("w:1")["trace_id"] == "ab" * 16
    assert tracing.journaled("w:2") == {}  # the caller did not sample it: nothing recorded
    with tracing.within("w:2"), tracing.span("chatgate.turn") as span:
        assert span is tracing.OFF
        carrier: dict[str, str] = {}
        tracing.inject(carrier)  # its trace context still passes on, unsampled
    assert carrier["traceparent"].startswith(f"00-{'ab' * 16}-") and carrier[
        "traceparent"
    ].endswith("-00")
    tracing.finish_message("w:1")
    tracing.finish_message("w:2")
    [root] = own.spans().values()
    assert root.context.trace_id == int("ab" * 16, 16)
    assert root.parent is not None and root.parent.is_remote
    assert root.parent.span_id == int("cd" * 8, 16)


def test_own_spans_write_the_same_request_bytes_as_sdk_spans(own: Own) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    earlier = f"00-{'12' * 16}-{'34' * 8}-01"
    tracing.start_message("m", "telegram message", link=earlier, chatgate__channel="tg")
    with tracing.within("m"), tracing.span("chatgate.turn", steps=["a", "b"]) as turn:
        turn.event("chatgate.send_retry", attempt=1)
        turn.fail("DeliveryFailed")
    tracing.finish_message("m")
    spans = list(own.spans().values())
    assert len(spans) == 2 and spans[1].links
    assert SpanWriter().request(spans) == encode_spans(spans).SerializeToString()


def test_an_exception_recorded_on_an_own_span_names_its_type_only(own: Own) -> None:
    tracing.start_message("m", "telegram message")
    with tracing.within("m"):
        trace.get_current_span().record_exception(ValueError("sk-secret in the text"))
    tracing.finish_message("m")
    [root] = own.spans().values()
    [event] = root.events
    assert event.name == "exception"
    assert dict(event.attributes or {}) == {"exception.type": "ValueError"}
