"""JSON from a stranger: strict UTF-8, bounded nesting, and only text UTF-8 can store."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from chatgate.http_input.answers import BadInput, InputReason
from chatgate.http_input.body import read_body

MAX_JSON_DEPTH = 64


def json_depth(value: Any, stop_after: int = MAX_JSON_DEPTH) -> int:
    """Deepest nesting of lists and dicts in ``value`` (iterative: no recursion limit); stops
    counting once past ``stop_after``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > stop_after:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _storable(text: str, payload: Any) -> bool:
    """False when a ``\\u`` escape decoded to a lone surrogate, which no UTF-8 store can hold."""
    if "\\u" not in text:
        return True
    try:
        json.dumps(payload, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_json(raw: bytes, *, empty: Any = None, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value in ``raw`` (``empty`` for no bytes at all), or `BadInput` (400)."""
    if not raw.strip():
        if empty is None:
            raise BadInput(400, InputReason.NOT_JSON, "body must be JSON")
        return empty
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(400, InputReason.NOT_UTF8, "body is not UTF-8") from exc
    try:
        payload = json.loads(text)
    except RecursionError as exc:
        raise BadInput(
            400, InputReason.JSON_TOO_DEEP, f"JSON nested deeper than {max_depth}"
        ) from exc
    except ValueError as exc:
        raise BadInput(400, InputReason.NOT_JSON, "body is not valid JSON") from exc
    # Nesting needs an opening bracket per level: most bodies skip the walk.
    if text.count("[") + text.count("{") > max_depth and json_depth(payload, max_depth) > max_depth:
        raise BadInput(400, InputReason.JSON_TOO_DEEP, f"JSON nested deeper than {max_depth}")
    if not _storable(text, payload):
        raise BadInput(400, InputReason.LONE_SURROGATE, "JSON holds a lone surrogate escape")
    return payload


async def read_json(request: web.Request, limit: int, *, empty: Any = None) -> Any:
    """`read_body` then `parse_json`: the request's JSON value or `BadInput`."""
    return parse_json(await read_body(request, limit), empty=empty)
