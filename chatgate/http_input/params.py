"""Query, path and header values: present, ASCII-digit numbers within bounds, storable text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from chatgate.http_input.answers import BadInput, InputReason

INT64_MAX = 2**63 - 1
MAX_DIGITS = 32  # converted only when this short: int() of a long digit run is slow


def required(values: Mapping[str, str], name: str) -> str:
    """``values[name]``, or a 400 naming the missing parameter."""
    value = values.get(name)
    if value is None or value == "":
        raise BadInput(400, InputReason.MISSING_PARAMETER, f"missing parameter: {name}")
    return value


def bounded_int(value: str, name: str, *, low: int = 0, high: int = INT64_MAX) -> int:
    """``value`` as an integer of ASCII digits in [low, high], or a 400 naming ``name``
    (``str.isdigit`` accepts superscripts that ``int`` refuses; 20 digits overflow SQLite)."""
    if not (value.isascii() and value.isdigit() and len(value) <= MAX_DIGITS):
        raise BadInput(400, InputReason.BAD_PARAMETER, f"{name} must be an integer {low}-{high}")
    number = int(value)
    if not low <= number <= high:
        raise BadInput(400, InputReason.BAD_PARAMETER, f"{name} must be an integer {low}-{high}")
    return number


def utf8_clean(values: Iterable[str], what: str) -> None:
    """A 400 when any value holds bytes that were not UTF-8 (aiohttp keeps them as lone
    surrogates, which no store can write)."""
    for value in values:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise BadInput(400, InputReason.NOT_UTF8, f"{what} is not UTF-8") from exc
