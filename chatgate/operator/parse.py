"""An action's arguments from an HTTP request, from the command line, and back into a request.

Every value passes the same `http_input` rules whichever way it comes: a required parameter must
be present and non-empty, text must be UTF-8, a number is ASCII digits within the field's bounds.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from aiohttp import web

from chatgate.http_input import BadInput, InputReason, bounded_int, read_json, required, utf8_clean
from chatgate.operator.actions import Action, is_required, spec_of

A = TypeVar("A")
MAX_API_BODY = 64 * 1024


def convert(action: Action[A, Any], given: Mapping[str, str]) -> A:
    """Typed arguments from text values, or a 400 naming the first bad one."""
    for field in action.fields():
        if is_required(field):
            required(given, field.name)
    utf8_clean(given.values(), "a parameter")
    values: dict[str, Any] = {}
    for field in action.fields():
        if field.name not in given:
            continue
        text = given[field.name]
        if action.is_number(field.name):
            spec = spec_of(field)
            values[field.name] = bounded_int(text, field.name, low=spec.low, high=spec.high)
        else:
            values[field.name] = text
    return action.make_args(values)


async def from_request(action: Action[A, Any], request: web.Request) -> A:
    """The arguments from the path, then the query (GET, DELETE) or the JSON body (POST)."""
    in_path = action.route.path_params()
    given = {name: request.match_info[name] for name in in_path}
    rest = [f for f in action.fields() if f.name not in in_path]
    if action.route.method == "POST" and rest:
        given.update(await _from_body(request, rest))
    else:
        given.update({f.name: request.query[f.name] for f in rest if f.name in request.query})
    return convert(action, given)


async def _from_body(request: web.Request, fields: list[dataclasses.Field[Any]]) -> dict[str, str]:
    data = await read_json(request, MAX_API_BODY)
    names = [f.name for f in fields if is_required(f)]
    if not isinstance(data, dict):
        raise BadInput(400, InputReason.NOT_JSON, f"JSON body needs {', '.join(names)}")
    given: dict[str, str] = {}
    for field in fields:
        value = data.get(field.name)
        if isinstance(value, str):
            given[field.name] = value
        elif is_required(field):
            raise BadInput(400, InputReason.MISSING_PARAMETER, f"JSON body needs {field.name}")
    return given


def from_namespace(action: Action[A, Any], ns: argparse.Namespace) -> A:
    """The arguments argparse read (its converters checked the numbers)."""
    return action.make_args({f.name: getattr(ns, f.name) for f in action.fields()})


def to_request(action: Action[A, Any], args: A) -> tuple[str, str, dict[str, str] | None]:
    """Method, path (with query) and JSON body that ask the daemon for ``action(args)``."""
    route = action.route
    values = {
        f.name: str(getattr(args, f.name))
        for f in action.fields()
        if getattr(args, f.name) is not None
    }
    path = route.path
    for name in route.path_params():
        path = path.replace("{" + name + "}", quote(values.pop(name), safe=""))
    if route.method == "POST":
        return route.method, path, values
    return route.method, path + ("?" + urlencode(values) if values else ""), None
