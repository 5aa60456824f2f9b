"""Turn pydantic validation errors into ConfigIssues that name the key path and YAML line."""

from __future__ import annotations

import types
from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from chatgate.config.agent_models import AGENT_BACKENDS
from chatgate.config.errors import ConfigIssue, KeyPath
from chatgate.config.interpolate import Interpolation
from chatgate.config.secrets import is_secret_key
from chatgate.config.source import YamlSource

_YAML_KINDS = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}


def issues_from_validation(
    exc: ValidationError,
    src: YamlSource,
    info: Interpolation,
    *,
    prefix: KeyPath = (),
    vocabulary: Iterable[str] = (),
    model: type[BaseModel] | None = None,
) -> list[ConfigIssue]:
    """One ConfigIssue per pydantic error, with discriminator tags removed from the path.

    "Did you mean" hints come from the fields of ``model`` at the error's location when that
    resolves, else from ``vocabulary``. Values are never shown for secret-looking keys or for
    values read from `*_file` secrets.
    """
    words = sorted(set(vocabulary))
    issues = []
    for err in exc.errors(include_url=False):
        path = _clean_path(src.data, (*prefix, *err["loc"]))
        if err["type"] == "union_tag_invalid" and isinstance(err.get("input"), dict):
            path = (*path, "backend")  # point at the bad tag, not at the whole agent
        local = _fields_at(model, path[len(prefix) : -1]) if model is not None else set()
        secret = path in info.file_values or _holds_secret(err.get("input"), info)
        message = _message(err, path, sorted(local) or words, hide_value=secret)
        message = mask_texts(message, info.secret_texts)
        unset = info.unset.get(path)
        if unset:
            message += f" (environment variable {', '.join(unset)} is not set)"
        issues.append(src.issue(path, message))
    return issues


def model_vocabulary(*models: type[BaseModel]) -> set[str]:
    """Every field name (and alias) reachable from ``models``, for "did you mean" hints."""
    seen: set[type[BaseModel]] = set()
    words: set[str] = set()
    stack = list(models)
    while stack:
        model = stack.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, field in model.model_fields.items():
            words.add(field.alias or name)
            stack.extend(_nested_models(field.annotation))
    return words


def _nested_models(annotation: Any) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    for arg in getattr(annotation, "__args__", ()) or ():
        found.extend(_nested_models(arg))
    for meta in getattr(annotation, "__metadata__", ()) or ():
        found.extend(_nested_models(meta))
    origin = getattr(annotation, "__origin__", None)
    if origin is not None and origin is not annotation:
        found.extend(_nested_models(origin))
    return found


def _clean_path(data: Any, loc: tuple[Any, ...]) -> KeyPath:
    """Drop pydantic's union-tag and validator segments that do not exist in the YAML."""
    path: list[str | int] = []
    current = data
    for part in loc:
        if isinstance(current, dict) and part not in current and part in AGENT_BACKENDS:
            continue
        if isinstance(part, str) and ("[" in part or part.startswith("function-")):
            continue
        path.append(part)
        if isinstance(current, dict):
            current = current.get(part)
        elif isinstance(current, list) and isinstance(part, int) and part < len(current):
            current = current[part]
        else:
            current = None
    return tuple(path)


def _fields_at(model: type[BaseModel], parts: KeyPath) -> set[str]:
    """Field names (and aliases) of the model(s) found at ``parts`` below ``model``."""
    current: list[Any] = [model]
    for part in parts:
        current = [
            found
            for annotation in current
            for leaf in _leaves(annotation)
            for found in _below(leaf, part)
        ]
    words: set[str] = set()
    for leaf in (leaf for annotation in current for leaf in _leaves(annotation)):
        if isinstance(leaf, type) and issubclass(leaf, BaseModel):
            words.update(f.alias or n for n, f in leaf.model_fields.items())
    return words


def _below(leaf: Any, part: str | int) -> list[Any]:
    """The annotations one step below type ``leaf`` at key or index ``part``."""
    origin = get_origin(leaf)
    if isinstance(leaf, type) and issubclass(leaf, BaseModel):
        return [f.annotation for n, f in leaf.model_fields.items() if part in (n, f.alias)]
    if origin is dict and isinstance(part, str):
        return [get_args(leaf)[1]]
    if origin is list and isinstance(part, int):
        return [get_args(leaf)[0]]
    return []


def _leaves(annotation: Any) -> Iterator[Any]:
    """Unwrap Annotated and unions (including Optional) into their member types."""
    origin = get_origin(annotation)
    if origin is Annotated:
        yield from _leaves(get_args(annotation)[0])
    elif origin is Union or origin is types.UnionType:
        for arg in get_args(annotation):
            yield from _leaves(arg)
    else:
        yield annotation


def _message(err: ErrorDetails, path: KeyPath, words: list[str], *, hide_value: bool) -> str:
    kind = err["type"]
    value = None if hide_value else err.get("input")
    last = path[-1] if path else ""
    if kind == "extra_forbidden":
        import difflib  # only for a config with a mistake in it

        hint = difflib.get_close_matches(str(last), words, n=1, cutoff=0.7)
        suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
        return f"unknown key '{last}'{suggestion}"
    known = _known_kind(kind, dict(err.get("ctx") or {}), value, last, hide_value=hide_value)
    if known is not None:
        return known
    return _pydantic_message(err, value, last)


def _known_kind(
    kind: str, ctx: dict[str, Any], value: Any, last: str | int, *, hide_value: bool
) -> str | None:
    """Our own words for the errors an operator meets most (None: pydantic's words)."""
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
        shown = _shown(value, last)
        return f"{shown} is not one of {expected}" if shown else f"must be one of {expected}"
    if kind == "missing":
        return "required key is missing"
    if kind == "union_tag_not_found":
        return f"missing 'backend' (one of {', '.join(AGENT_BACKENDS)})"
    if kind == "union_tag_invalid":
        shown = "" if hide_value else _shown(ctx.get("tag"), "backend")
        return f"{shown or 'backend'} is not one of {', '.join(AGENT_BACKENDS)}"
    return None


def _pydantic_message(err: ErrorDetails, value: Any, last: str | int) -> str:
    kind = err["type"]
    message = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            message = message[len(prefix) :]
    message = message[:1].lower() + message[1:]
    if kind in ("string_pattern_mismatch",) and not is_secret_key(last):
        shown = _shown(value, last)
        return f"{shown} has the wrong format" if shown else message
    if kind.endswith("_type"):
        # the type only: a string given where a section belongs is often a pasted secret
        message += f", got {_yaml_kind(err.get('input'))}"
    elif kind.endswith("_parsing") and not is_secret_key(last):
        shown = _shown(value, last)
        if shown:
            message += f", got {shown}"
    return message


def _yaml_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return _YAML_KINDS.get(type(value), type(value).__name__)


def _shown(value: Any, key: str | int) -> str:
    if is_secret_key(key) or not isinstance(value, str | int | float | bool) or value is None:
        return ""
    if isinstance(value, int) and value.bit_length() > 200:
        return ""
    text = repr(value)
    return text if len(text) <= 60 else ""


def _holds_secret(value: Any, info: Interpolation) -> bool:
    """True when an offending value is, or contains, a secret (so it is never echoed)."""
    if not isinstance(value, str | int | float):
        return False
    try:
        text = str(value)
    except ValueError:  # an integer too long to print: never echo it
        return True
    return any(
        text == secret or (len(secret) > 3 and secret in text) for secret in info.secret_texts
    )


def mask_texts(message: str, secrets: Iterable[str]) -> str:
    """``message`` with every secret text longer than three characters replaced."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) > 3 and secret in message:
            message = message.replace(secret, "**********")
    return message
