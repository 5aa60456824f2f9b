"""Declarative webhook routing: a filter tree and text templates over an inbound HTTP event.

The event is ``{"payload": ..., "headers": ..., "query": ...}`` built from untrusted input, so
nothing here raises on odd data, and templates only substitute dotted field paths (no format
specs, attribute access or evaluation). Filters come from config and are checked with
``validate_filter``; a malformed filter never matches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

OPERATORS: tuple[str, ...] = (
    "exists",
    "equals",
    "not_equals",
    "contains",
    "in",
    "regex",
    "startswith",
)
_COMBINATORS = ("all", "any", "not")
_MAX_DEPTH = 32
_HEADERS = "headers"


def _index(segment: str) -> int | None:
    return int(segment) if segment.isascii() and segment.isdigit() else None


def _step(current: Any, segment: str, case_insensitive: bool) -> tuple[bool, Any]:
    if isinstance(current, Mapping):
        if segment in current:
            return True, current[segment]
        if case_insensitive:
            wanted = segment.lower()
            for key, value in current.items():
                if isinstance(key, str) and key.lower() == wanted:
                    return True, value
        return False, None
    if isinstance(current, Sequence) and not isinstance(current, str | bytes | bytearray):
        position = _index(segment)
        if position is not None and position < len(current):
            return True, current[position]
    return False, None


def resolve_field(event: Mapping[str, Any], path: str) -> Any:
    """Value at dotted ``path`` (header names case-insensitive, digits index lists), else None."""
    if not isinstance(path, str) or not path:
        return None
    segments = path.split(".")
    current: Any = event
    try:
        for depth, segment in enumerate(segments):
            header_name = depth == 1 and segments[0] == _HEADERS
            found, current = _step(current, segment, header_name)
            if not found:
                return None
    except Exception:
        return None
    return current


def _same(left: Any, right: Any) -> bool:
    """Equality that keeps booleans apart from numbers and lets "42" equal 42."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, str) and isinstance(right, int | float):
        return left.strip() == str(right)
    if isinstance(right, str) and isinstance(left, int | float):
        return right.strip() == str(left)
    try:
        return bool(left == right)
    except Exception:
        return False


def _contains(haystack: Any, needle: Any) -> bool:
    if isinstance(haystack, str):
        return isinstance(needle, str) and needle in haystack
    if isinstance(haystack, Mapping):
        return isinstance(needle, str) and needle in haystack
    if isinstance(haystack, Sequence) and not isinstance(haystack, bytes | bytearray):
        return any(_same(item, needle) for item in haystack)
    return False


def _regex_subject(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _apply(op: str, resolved: Any, operand: Any) -> bool:
    if op == "exists":
        return (resolved is not None) is bool(operand)
    if op == "equals":
        return _same(resolved, operand)
    if op == "not_equals":
        return not _same(resolved, operand)
    if op == "contains":
        return _contains(resolved, operand)
    if op == "in":
        return any(_same(resolved, option) for option in operand)
    if op == "startswith":
        return isinstance(resolved, str) and resolved.startswith(operand)
    subject = _regex_subject(resolved)
    return subject is not None and re.search(operand, subject) is not None


def _evaluate(event: Mapping[str, Any], node: Any) -> bool:
    """Evaluate a tree already known to be valid."""
    if node is None or (isinstance(node, Mapping) and not node):
        return True
    if "all" in node:
        return all(_evaluate(event, child) for child in node["all"])
    if "any" in node:
        return any(_evaluate(event, child) for child in node["any"])
    if "not" in node:
        return not _evaluate(event, node["not"])
    resolved = resolve_field(event, node["field"])
    ops = [key for key in node if key != "field"]
    if not ops:
        return resolved is not None
    return _apply(ops[0], resolved, node[ops[0]])


def matches(event: Mapping[str, Any], node: Any) -> bool:
    """Whether ``event`` passes the filter; None or {} match everything, malformed matches nothing.

    The whole tree is validated first, so a broken branch under ``not`` can't flip to a match.
    """
    try:
        if validate_filter(node):
            return False
        return _evaluate(event, node)
    except Exception:
        return False


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _check_operand(op: str, operand: Any, where: str) -> list[str]:
    if op == "exists" and not isinstance(operand, bool):
        return [f"{where}: 'exists' takes true or false"]
    if op == "in" and not _is_list(operand):
        return [f"{where}: 'in' takes a list of values"]
    if op == "startswith" and not isinstance(operand, str):
        return [f"{where}: 'startswith' takes a string"]
    if op == "regex":
        if not isinstance(operand, str):
            return [f"{where}: 'regex' takes a string"]
        try:
            re.compile(operand)
        except re.error as exc:
            return [f"{where}: bad regex {operand!r}: {exc}"]
    return []


def _check_leaf(node: Mapping[Any, Any], where: str) -> list[str]:
    field = node["field"]
    problems: list[str] = []
    if not isinstance(field, str) or not field or "" in field.split("."):
        problems.append(f"{where}: 'field' must be a dotted path such as 'payload.action'")
    ops = [key for key in node if key != "field"]
    unknown = [key for key in ops if key not in OPERATORS]
    for key in unknown:
        expected = ", ".join(OPERATORS)
        problems.append(f"{where}: unknown operator {key!r} (expected one of {expected})")
    known = [key for key in ops if key in OPERATORS]
    if len(known) > 1:
        problems.append(f"{where}: one operator per leaf, got {', '.join(known)}")
    elif known:
        problems.extend(_check_operand(known[0], node[known[0]], where))
    return problems


def _check_node(node: Any, where: str, depth: int) -> list[str]:
    if node is None or (isinstance(node, Mapping) and not node):
        return []
    if depth > _MAX_DEPTH:
        return [f"{where}: nested deeper than {_MAX_DEPTH} levels"]
    if not isinstance(node, Mapping):
        return [f"{where}: expected a mapping, got {type(node).__name__}"]
    kinds = [key for key in node if key in _COMBINATORS]
    if not kinds:
        if "field" in node:
            return _check_leaf(node, where)
        keys = ", ".join(repr(key) for key in node)
        return [f"{where}: expected 'all', 'any', 'not' or a 'field' leaf, got keys {keys}"]
    return _check_combinator(node, kinds[0], where, depth)


def _check_combinator(node: Mapping[Any, Any], name: str, where: str, depth: int) -> list[str]:
    """An 'all', 'any' (a list of conditions) or 'not' (one condition) node."""
    extra = [key for key in node if key != name]
    if extra:
        keys = ", ".join(repr(key) for key in extra)
        return [f"{where}: {name!r} cannot be combined with other keys ({keys})"]
    if name == "not":
        return _check_node(node["not"], f"{where}.not", depth + 1)
    children = node[name]
    if not _is_list(children):
        return [f"{where}.{name}: expected a list of conditions"]
    problems: list[str] = []
    for position, child in enumerate(children):
        problems.extend(_check_node(child, f"{where}.{name}[{position}]", depth + 1))
    return problems


def validate_filter(node: Any, path: str = "when") -> list[str]:
    """Every problem in a filter tree, each prefixed with its location; [] means valid."""
    try:
        return _check_node(node, path, 0)
    except Exception as exc:
        return [f"{path}: unreadable filter ({type(exc).__name__})"]


_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[^{}]+|[{}]")
_FIELD_PATH = re.compile(r"[\w\-@$]+(?:\.[\w\-@$]+)*")

_TEXT, _FIELD, _BAD_PLACEHOLDER, _STRAY_BRACE = "text", "field", "bad", "stray"


def _tokens(template: str) -> Iterator[tuple[str, str]]:
    """Yield (kind, text) pieces; bad placeholders and stray braces are kept as literal text."""
    for match in _TOKEN.finditer(template):
        piece = match.group(0)
        inner = match.group(1)
        if piece in ("{{", "}}"):
            yield _TEXT, piece[0]
        elif inner is not None:
            name = inner.strip()
            if _FIELD_PATH.fullmatch(name):
                yield _FIELD, name
            else:
                yield _BAD_PLACEHOLDER, piece
        elif piece in ("{", "}"):
            yield _STRAY_BRACE, piece
        else:
            yield _TEXT, piece


def _render_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        if isinstance(value, bool | Mapping | list | tuple):
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
        return str(value)
    except Exception:
        return ""


def render_template(template: str, event: Mapping[str, Any]) -> str:
    """Fill ``{dotted.path}`` placeholders from ``event``; missing fields render empty.

    ``{{`` and ``}}`` give literal braces; anything else in braces is copied through as is.
    """
    return render_pieces(compile_template(template), event)


Pieces = tuple[tuple[str, str], ...]


def compile_template(template: str) -> Pieces:
    """A template parsed once, for a caller that renders it many times (`render_pieces`)."""
    return tuple(_tokens(template))


def render_pieces(pieces: Pieces, event: Mapping[str, Any]) -> str:
    """`render_template` over a template parsed by `compile_template`."""
    return "".join(
        [
            _render_value(resolve_field(event, text)) if kind == _FIELD else text
            for kind, text in pieces
        ]
    )


def template_fields(template: str) -> list[str]:
    """Distinct placeholder paths in order of first use (for config validation)."""
    seen: dict[str, None] = {}
    for kind, text in _tokens(template):
        if kind == _FIELD:
            seen.setdefault(text, None)
    return list(seen)


def validate_template(template: str, path: str = "template") -> list[str]:
    """Problems that would make parts of a template render literally; [] means valid."""
    problems: list[str] = []
    for kind, text in _tokens(template):
        if kind == _BAD_PLACEHOLDER:
            problems.append(f"{path}: {text!r} is not a dotted field path placeholder")
        elif kind == _STRAY_BRACE:
            problems.append(f"{path}: unbalanced {text!r} (write {text * 2!r} for a literal brace)")
    return problems
