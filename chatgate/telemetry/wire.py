"""OTLP trace export requests written straight to protobuf wire bytes.

The OTLP exporter's own encoder builds a protobuf object for every span, attribute and array
element, then serializes them: about as much CPU per span as the SDK spends making the span.
This writes the same ``ExportTraceServiceRequest`` bytes (field for field, as
`opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans` would; a test compares
the two) with plain byte strings, and keeps the encoding of attribute pairs that recur (the
model, the operation, the channel) so most attributes cost one dict lookup.
"""

from __future__ import annotations

import functools
import struct
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from itertools import chain, repeat
from typing import Any

from opentelemetry.trace import SpanKind, StatusCode

_KINDS = {"INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
# a span's kind field by the SpanKind member's identity (an enum's name and hash are Python code)
_KIND_FIELDS = {id(kind): b"\x30" + bytes((_KINDS[kind.name],)) for kind in SpanKind}
_UNSET_FIELD = b"\x7a\x00"  # an unset status without a description
_IDS = b"\x0a\x10%b\x12\x08%b"  # a span's trace and span ids
_ATTRIBUTE_TAGS = (b"\x0a", b"\x1a", b"\x22", b"\x4a")  # resource, scope/event, link, span
_HAS_IS_REMOTE = 0x100  # SpanFlags: the parent's remoteness is known
_IS_REMOTE = 0x200
_MASK64 = (1 << 64) - 1
_CACHED = 4096  # attribute pairs whose encoding is kept (cleared when full)
_SMALL = [bytes((n,)) for n in range(128)]
_CACHEABLE = frozenset((str, bool, int, tuple))  # attribute values whose encodings are kept

_pack_q = struct.Struct("<Q").pack
_pack_d = struct.Struct("<d").pack
_pack_i = struct.Struct("<I").pack
_times = struct.Struct("<BQBQ").pack  # a span's start and end fields


def _varint(n: int) -> bytes:
    if n < 128:
        return _SMALL[n]
    if n < 16384:  # most spans' lengths
        return bytes(((n & 0x7F) | 0x80, n >> 7))
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
    if type(value) is tuple:  # before the checks below: Sequence is an ABC (checked in Python)
        return _field(b"\x2a", _array(value))
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
    """An ArrayValue's elements; floats (a turn's step durations) packed in one call."""
    if values and set(map(type, values)) == {float}:  # AnyValue{double}: 9 bytes each
        return _doubles(len(values))(*chain.from_iterable(zip(repeat(_DOUBLE), values)))
    return b"".join([_field(b"\x0a", _value(v)) for v in values])


_DOUBLE = b"\x0a\x09\x21"  # an array element: AnyValue{double}


@functools.cache
def _doubles(n: int) -> Callable[..., bytes]:
    """Packs ``n`` array elements of doubles, each given as (_DOUBLE, value)."""
    return struct.Struct("<" + "3sd" * n).pack


def _pair(key: str, value: Any) -> bytes:
    """A KeyValue message."""
    return _field(b"\x0a", key.encode()) + _field(b"\x12", _value(value))


class SpanWriter:
    """Writes span batches; keeps the encodings of recurring scalar attribute pairs."""

    def __init__(self) -> None:
        self._pairs = {tag: _Pairs(tag) for tag in _ATTRIBUTE_TAGS}
        self._names: dict[tuple[str, int], bytes] = {}

    def request(self, spans: Sequence[Any]) -> bytes:
        """The serialized ExportTraceServiceRequest of ``spans`` (SDK ReadableSpans)."""
        # grouped by resource and scope objects (a Resource hashes by serializing its
        # attributes to JSON, a scope in Python), then equal scopes made apart are merged
        groups: dict[tuple[int, int], list[bytes]] = {}
        made: dict[tuple[int, int], tuple[Any, Any]] = {}
        for span in spans:
            resource, scope = span.resource, span.instrumentation_scope
            key = (id(resource), id(scope))
            encoded = groups.get(key)
            if encoded is None:
                encoded = groups[key] = []
                made[key] = (resource, scope or None)
            encoded.append(self._span(span))
        by_resource: dict[int, tuple[Any, defaultdict[Any, list[bytes]]]] = {}
        for key, encoded in groups.items():
            resource, scope = made[key]
            by_resource.setdefault(key[0], (resource, defaultdict(list)))[1][scope].extend(encoded)
        out = []
        for resource, scopes in by_resource.values():
            body = [_field(b"\x0a", self._attributes(b"\x0a", resource.attributes))]
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
        parts = [_IDS % (context.trace_id.to_bytes(16, "big"), context.span_id.to_bytes(8, "big"))]
        if context.trace_state:
            state = ",".join([f"{k}={v}" for k, v in context.trace_state.items()])
            parts.append(_field(b"\x1a", state.encode()))
        if parent:
            parts.append(b"\x22\x08" + parent.span_id.to_bytes(8, "big"))
        parts.append(self._named(span.name, span.kind))
        start, end = span.start_time, span.end_time
        if start and end:
            parts.append(_times(0x39, start, 0x41, end))
        else:
            parts.append(
                (b"\x39" + _pack_q(start) if start else b"")
                + (b"\x41" + _pack_q(end) if end else b"")
            )
        attributes = span.attributes
        if attributes:
            parts.append(self._attributes(b"\x4a", attributes))
        parts.append(self._events_links(span))
        remote = parent is not None and parent.is_remote
        status = span.status
        if status is not None and (
            status.status_code is not StatusCode.UNSET or status.description
        ):
            parts.append(_field(b"\x7a", _status(status)) + _FLAGS[remote])
        else:
            parts.append(_UNSET_FLAGS[remote] if status is not None else _FLAGS[remote])
        return b"".join(parts)

    def _events_links(self, span: Any) -> bytes:
        """A span's dropped attribute count, events, links and what of them was dropped."""
        parts = []
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
        return b"".join(parts)

    def _named(self, name: str, kind: Any) -> bytes:
        """A span's name and kind fields (they recur: a few names per kind)."""
        known = (name, id(kind))  # an enum member hashes in Python
        encoded = self._names.get(known)
        if encoded is None:
            if len(self._names) >= _CACHED:
                self._names.clear()
            named = _field(b"\x2a", name.encode()) if name else b""
            encoded = self._names[known] = named + _KIND_FIELDS[id(kind)]
        return encoded

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
        """Each attribute as a KeyValue field ``tag``, looked up by (key, value, type) in the
        pairs written before (True and 1 are equal, their types are not) without a Python
        step per attribute; a pair not met yet is written by `_Pairs.__missing__`."""
        if not attributes:
            return b""
        values = attributes.values()
        found = zip(attributes.keys(), values, map(type, values), strict=True)
        try:
            return b"".join(map(self._pairs[tag].__getitem__, found))
        except TypeError:  # a value that does not hash (a tuple holding a list)
            return b"".join([_field(tag, _pair(k, v)) for k, v in attributes.items()])


class _Pairs(dict[tuple[str, Any, type], bytes]):
    """The KeyValue fields with tag ``tag`` written so far, by (key, value, value type); only
    recurring kinds of value are kept (strings, integers, booleans, tuples of strings), at most
    `_CACHED` (cleared when full)."""

    def __init__(self, tag: bytes) -> None:
        super().__init__()
        self.tag = tag

    def __missing__(self, found: tuple[str, Any, type]) -> bytes:
        key, value, kind = found
        encoded = _field(self.tag, _pair(key, value))
        if kind not in _CACHEABLE or (kind is tuple and not _strings(value)):
            return encoded  # durations, counts: they rarely recur
        if len(self) >= _CACHED:
            self.clear()
        self[found] = encoded
        return encoded


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


_FLAGS = {
    remote: b"\x85\x01" + _pack_i(_HAS_IS_REMOTE | (_IS_REMOTE if remote else 0))
    for remote in (False, True)
}
# an unset status and the flags: how most spans end
_UNSET_FLAGS = {remote: _UNSET_FIELD + flags for remote, flags in _FLAGS.items()}
