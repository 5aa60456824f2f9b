"""What an Events API request body must be before Bolt reads it.

Bolt parses the body itself (JSON, or a form whose `payload` field is JSON) and raises on what
it cannot parse; the same decision here turns such a body into a 400 instead."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from chatgate.http_input import BadInput, InputReason, parse_json

# Payload fields Bolt reads as objects when present (a JSON null or list there breaks it).
_OBJECT_FIELDS = ("event", "team", "container", "message", "view")
# Where Bolt reads a type or an id: the body, its event and what the event names.
_NESTED = ("event", "item", "message", "previous_message", "assistant_thread", "container")
_TEXT_FIELDS = ("type", "subtype")  # compared and matched as strings
_ID_FIELDS = ("channel", "user", "team", "enterprise")  # an id string or an object with `id`


def check_events_body(body: bytes, content_type: str) -> str:
    """The body as text when Bolt can read it; else `BadInput` (400)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(400, InputReason.NOT_UTF8, "body is not UTF-8") from exc
    if not text:
        return text
    if content_type == "application/json" or text.startswith("{"):
        _object(parse_json(body))
    elif "payload" in text:
        payload = dict(parse_qsl(text, keep_blank_values=True)).get("payload")
        if payload is not None:
            _object(parse_json(payload.encode("utf-8", "surrogatepass")))
    return text


def _object(data: Any) -> None:
    if not isinstance(data, dict):
        raise BadInput(400, InputReason.NOT_JSON, "body must be a JSON object")
    for key in _OBJECT_FIELDS:
        if key in data and not isinstance(data[key], dict):  # null too: Bolt tests `in` on it
            raise BadInput(400, InputReason.NOT_JSON, f"{key} must be an object")
    if data.get("type") == "event_callback" and "event" not in data:
        raise BadInput(400, InputReason.MISSING_PARAMETER, "event_callback needs an event")
    grants = _objects(data, "authorizations", empty_ok=True)
    actions = _objects(data, "actions", empty_ok=False)
    for part in _parts(data, grants, actions):
        _fields(part)


def _objects(data: dict[str, Any], key: str, *, empty_ok: bool) -> Any:
    """``data[key]`` when absent or a list of objects (non-empty unless ``empty_ok``)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, list) and (value or empty_ok) and all(isinstance(v, dict) for v in value):
        return value
    wanted = "a list of objects" if empty_ok else "a non-empty list of objects"
    raise BadInput(400, InputReason.NOT_JSON, f"{key} must be {wanted}")


def _parts(data: dict[str, Any], grants: Any, actions: Any) -> list[dict[str, Any]]:
    """The objects Bolt reads types and ids from (a bounded walk, not the whole body)."""
    found, stack = [], [data]
    while stack:
        part = stack.pop()
        found.append(part)
        stack.extend(part[k] for k in _NESTED if isinstance(part.get(k), dict))
    return found + list(grants or ()) + list(actions or ())


def _fields(part: dict[str, Any]) -> None:
    for key in _TEXT_FIELDS:
        if key in part and not isinstance(part[key], str):
            raise BadInput(400, InputReason.NOT_JSON, f"{key} must be a string")
    for key in _ID_FIELDS:
        value = part.get(key)
        if value is not None and not isinstance(value, str | dict):
            raise BadInput(400, InputReason.NOT_JSON, f"{key} must be an id or an object")
