"""OTLP trace export requests written straight to protobuf wire bytes.

The OTLP exporter's own encoder builds a protobuf object for every span, attribute and array
element, then serializes them: about as much CPU per span as the SDK spends making the span.
This writes the same ``ExportTraceServiceRequest`` bytes (field for field, as
`opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans` would; a test compares
the two) with plain byte strings, and keeps the encoding of attribute pairs that recur (the
model, the operation, the channel) so most attributes cost one dict lookup.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.trace import SpanKind, StatusCode

_KINDS = {"INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
# a span's kind field by the SpanKind member's identity (an enum's name and hash are Python code)
_KIND_FIELDS = {id(kind): b"\x30" + bytes((_KINDS[kind.name],)) for kind in SpanKind}
_UNSET_FIELD = b"\x7a\x00"  # an unset status without a description
_HAS_IS_REMOTE = 0x100  # SpanFlags: the parent's remoteness is known
_IS_REMOTE = 0x200
_MASK64 = (1 << 64) - 1
_CACHED = 4096  # attribute pairs whose encoding is kept (cleared when full)
_SMALL = [bytes((n,)) for n in range(128)]
_CACHEABLE = (str, bool, int, tuple)  # attribute values whose pair encodings are kept

_pack_q = struct.Struct("<Q").pack
_pack_d = struct.Struct("<d").pack
_pack_i = struct.Struct("<I").pack


def _varint(n: int) -> bytes:
    if n < 128:
        return _SMALL[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field."""
    return tag + _varint(len(payload)) + payload


def _value(value: Any) -> bytes:
    """An AnyValue message."""
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, str):
        return _field(b"\x0a", value.encode())
    if isinstance(value, int):
        return b"\x18" + _varint(value & _MASK64)
    if isinstance(value, float):
        return b"\x21" + _pack_d(value)
    if isinstance(value, bytes):
        return _field(b"\x3a", value)
    if value is None:
        return b""
    if isinstance(value, Sequence):
        return _field(b"\x2a", _array(value))
    if isinstance(value, Mapping):
        pairs = b"".join([_field(b"\x0a", _pair(str(k), v)) for k, v in value.items()])
        return _field(b"\x32", pairs)
    raise TypeError(f"an attribute value of type {type(value).__name__}")


def _array(values: Sequence[Any]) -> bytes:
    """An ArrayValue's elements; floats (a turn's step durations) in one step each."""
    if values and all(type(v) is float for v in values):  # AnyValue{double}: 9 bytes each
        return b"".join([b"\x0a\x09\x21" + _pack_d(v) for v in values])
    return b"".join([_field(b"\x0a", _value(v)) for v in values])


def _pair(key: str, value: Any) -> bytes:
    """A KeyValue message."""
    return _field(b"\x0a", key.encode()) + _field(b"\x12", _value(value))


class SpanWriter:
    """Writes span batches; keeps the encodings of recurring scalar attribute pairs."""

    def __init__(self) -> None:
        self._pairs: dict[tuple[str, type, Any], bytes] = {}

    def request(self, spans: Sequence[Any]) -> bytes:
        """The serialized ExportTraceServiceRequest of ``spans`` (SDK ReadableSpans)."""
        # by resource object: a Resource hashes by serializing its attributes to JSON
        # and by scope object (a scope hashes and compares in Python): equal scopes made apart
        # are merged when written
        resources: dict[int, Any] = {}
        scopes_by_id: dict[int, Any] = {}
        grouped: dict[int, dict[int, list[bytes]]] = defaultdict(lambda: defaultdict(list))
        for span in spans:
            resource = span.resource
            resources.setdefault(id(resource), resource)
            scope = span.instrumentation_scope or None
            scopes_by_id.setdefault(id(scope), scope)
            grouped[id(resource)][id(scope)].append(self._span(span))
        out = []
        for key, by_id in grouped.items():
            resource = resources[key]
            body = [_field(b"\x0a", self._attributes(b"\x0a", resource.attributes))]
            scopes: dict[Any, list[bytes]] = defaultdict(list)
            for scope_id, encoded in by_id.items():
                scopes[scopes_by_id[scope_id]].extend(encoded)
            for scope, encoded in scopes.items():
                body.append(_field(b"\x12", self._scope_spans(scope, encoded)))
            if resource.schema_url:
                body.append(_field(b"\x1a", resource.schema_url.encode()))
            out.append(_field(b"\x0a", b"".join(body)))
        return b"".join(out)

    def _scope_spans(self, scope: Any, encoded: list[bytes]) -> bytes:
        described = b""
        if scope is not None:
            described = (
                (_field(b"\x0a", scope.name.encode()) if scope.name else b"")
                + (_field(b"\x12", scope.version.encode()) if scope.version else b"")
                + self._attributes(b"\x1a", scope.attributes)
            )
        parts = [_field(b"\x0a", described), *[_field(b"\x12", s) for s in encoded]]
        if scope is not None and scope.schema_url:
            parts.append(_field(b"\x1a", scope.schema_url.encode()))
        return b"".join(parts)

    def _span(self, span: Any) -> bytes:
        context = span.context
        parent = span.parent
        parts = [
            b"\x0a\x10" + context.trace_id.to_bytes(16, "big"),
            b"\x12\x08" + context.span_id.to_bytes(8, "big"),
        ]
        if context.trace_state:
            state = ",".join([f"{k}={v}" for k, v in context.trace_state.items()])
            parts.append(_field(b"\x1a", state.encode()))
        if parent:
            parts.append(b"\x22\x08" + parent.span_id.to_bytes(8, "big"))
        if span.name:
            parts.append(_field(b"\x2a", span.name.encode()))
        parts.append(_KIND_FIELDS[id(span.kind)])
        if span.start_time:
            parts.append(b"\x39" + _pack_q(span.start_time))
        if span.end_time:
            parts.append(b"\x41" + _pack_q(span.end_time))
        parts.append(self._attributes(b"\x4a", span.attributes))
        if span.dropped_attributes:
            parts.append(b"\x50" + _varint(span.dropped_attributes))
        for event in span.events:
            parts.append(_field(b"\x5a", self._event(event)))
        if span.dropped_events:
            parts.append(b"\x60" + _varint(span.dropped_events))
        for link in span.links:
            parts.append(_field(b"\x6a", self._link(link)))
        if span.dropped_links:
            parts.append(b"\x70" + _varint(span.dropped_links))
        status = span.status
        if status is not None:
            unset = status.status_code is StatusCode.UNSET and not status.description
            parts.append(_UNSET_FIELD if unset else _field(b"\x7a", _status(status)))
        parts.append(b"\x85\x01" + _pack_i(_flags(parent)))
        return b"".join(parts)

    def _event(self, event: Any) -> bytes:
        return (
            (b"\x09" + _pack_q(event.timestamp) if event.timestamp else b"")
            + (_field(b"\x12", event.name.encode()) if event.name else b"")
            + self._attributes(b"\x1a", event.attributes)
            + (b"\x20" + _varint(event.dropped_attributes) if event.dropped_attributes else b"")
        )

    def _link(self, link: Any) -> bytes:
        context = link.context
        encoded: bytes = (
            b"\x0a\x10"
            + context.trace_id.to_bytes(16, "big")
            + b"\x12\x08"
            + context.span_id.to_bytes(8, "big")
            + self._attributes(b"\x22", link.attributes)
            + (b"\x28" + _varint(link.dropped_attributes) if link.dropped_attributes else b"")
            + b"\x35"
            + _pack_i(_flags(context))
        )
        return encoded

    def _attributes(self, tag: bytes, attributes: Mapping[str, Any] | None) -> bytes:
        """Each attribute as a KeyValue field ``tag``; scalar pairs from the cache."""
        if not attributes:
            return b""
        pairs = self._pairs
        out = []
        for key, value in attributes.items():
            if isinstance(value, _CACHEABLE) and (type(value) is not tuple or _strings(value)):
                known = (key, type(value), value)
                encoded = pairs.get(known)
                if encoded is None:
                    if len(pairs) >= _CACHED:
                        pairs.clear()
                    encoded = pairs[known] = _field(b"", _pair(key, value))
                out.append(tag + encoded)
            else:
                out.append(_field(tag, _pair(key, value)))
        return b"".join(out)


def _strings(value: tuple[Any, ...]) -> bool:
    """A tuple of strings (its encoding recurs: a turn's step names)."""
    return all(type(v) is str for v in value)


def _status(status: Any) -> bytes:
    code = status.status_code.value
    described = _field(b"\x12", status.description.encode()) if status.description else b""
    return described + (b"\x18" + _SMALL[code] if code else b"")


def _flags(parent: Any) -> int:
    if parent is not None and parent.is_remote:
        return _HAS_IS_REMOTE | _IS_REMOTE
    return _HAS_IS_REMOTE
