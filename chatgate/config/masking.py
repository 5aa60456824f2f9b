"""Masking secrets out of any text the gateway shows: logs, status, errors, doctor, config show.
The same pass makes a text whole: surrogates a model or tool emitted as lone JSON escapes, which
no UTF-8 store, log or platform takes, are joined into their character or replaced by U+FFFD.

Matching is case-insensitive (an SDK may lower-case an error that quotes a request path) and
covers the URL-quoted form of each secret. Telegram and Slack tokens are masked by their shape
even when not configured here (a proxy or an SDK error may echo another bot's token).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import fields, is_dataclass, replace
from typing import Any
from urllib.parse import quote, quote_plus

REDACTED = "**********"
MIN_SECRET_LENGTH = 4
TELEGRAM_TOKEN_SHAPE = r"\d{6,}:[A-Za-z0-9_-]{30,}"
SLACK_TOKEN_SHAPE = r"\bxox[abpersc]-[A-Za-z0-9-]{8,}|\bxapp-[A-Za-z0-9-]{8,}"
# What any ASCII text the token shapes match must contain (checked before the full, slower scan):
# six digits, a colon and 30 token characters (searched from the colon, a literal, ~20x faster
# than a scan that tries every position; a numeric chat id before a colon, as in message keys,
# is not enough), or "xox" / "xapp" in any case.
_DIGITS_COLON = re.compile(r":(?<=[0-9]{6}:)[A-Za-z0-9_-]{30}")
_SHAPE_WORDS = ("xox", "xapp")
_SHORTEST_SHAPE = len("xoxb-") + 8  # the shortest text either token shape matches
_SURROGATES = re.compile("[\ud800-\udfff]")


def whole_text(text: str) -> str:
    """``text`` as UTF-8 can hold it: a surrogate pair left in two halves (``"\\ud83d\\ude00"``
    decoded piece by piece) joined into its character, a lone surrogate replaced by U+FFFD."""
    if _SURROGATES.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class Masker:
    """Replaces every known secret, and anything shaped like a bot token, with REDACTED."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if len(secret) < MIN_SECRET_LENGTH:
                continue
            forms.update({secret, quote(secret, safe=""), quote_plus(secret, safe="")})
        # Longest first, so a secret that contains another is replaced whole.
        alternatives = [re.escape(form) for form in sorted(forms, key=len, reverse=True)]
        alternatives += [TELEGRAM_TOKEN_SHAPE, SLACK_TOKEN_SHAPE]
        self._pattern = re.compile("|".join(alternatives), re.IGNORECASE)
        self.secrets = frozenset(forms)
        ascii_forms = all(form.isascii() for form in forms)
        self._lowered = tuple(form.lower() for form in forms) if ascii_forms else None
        self._needles = _SHAPE_WORDS + (self._lowered or ())
        self._shortest = min([_SHORTEST_SHAPE, *(len(form) for form in forms)])

    def mask(self, text: str) -> str:
        if not text.isascii():  # O(1): CPython knows an all-ASCII string
            text = whole_text(text)
        if len(text) < self._shortest:
            return text  # shorter than any match (roles, names, reason codes)
        if self._lowered is not None and text.isascii() and not self._could_match(text):
            return text  # most log lines: skip the (slow) scan of the full pattern
        return self._pattern.sub(REDACTED, text)

    def _could_match(self, text: str) -> bool:
        """A necessary condition for the case-insensitive pattern to match ASCII ``text``:
        a secret form, or what every token shape contains (a loop, not a generator: this runs
        for every text a turn stores or logs)."""
        if ":" in text and _DIGITS_COLON.search(text) is not None:
            return True
        low = text.lower()
        for needle in self._needles:  # noqa: SIM110  (any() with a generator is slower here)
            if needle in low:
                return True
        return False


@functools.lru_cache(maxsize=8)
def masker_for(secrets: frozenset[str]) -> Masker:
    """A cached Masker (status and the API build one per answer otherwise)."""
    return Masker(secrets)


def mask_text(text: str, secrets: Iterable[str]) -> str:
    return masker_for(frozenset(secrets)).mask(text)


def masked(value: Any, mask: Masker) -> Any:
    """``value`` with every string in it masked: plain data and frozen dataclasses (bytes kept).
    What holds no secret comes back as the same object (most replies: nothing is rebuilt)."""
    cls = type(value)
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _KINDS[cls] = _kind_of(cls)
    if kind == _TEXT:
        return mask.mask(value)
    if kind == _DICT:
        return _masked_dict(value, mask)
    if kind == _ITEMS:
        return _masked_items(value, mask)
    if kind == _DATACLASS:
        return _masked_dataclass(value, mask)
    return value


# How ``masked`` walks a value of a type, decided once per type (a turn walks ~13 values).
_TEXT, _DICT, _ITEMS, _DATACLASS, _LEAF = range(5)
_KINDS: dict[type, int] = {}


def _kind_of(cls: type) -> int:
    if issubclass(cls, str):
        return _TEXT
    if issubclass(cls, dict):
        return _DICT
    if issubclass(cls, list | tuple):
        return _ITEMS
    if is_dataclass(cls):  # ``cls`` is an instance's type: the instance is a dataclass object
        return _DATACLASS
    return _LEAF


def _masked_dict(value: dict[Any, Any], mask: Masker) -> dict[Any, Any]:
    pairs = {k: masked(v, mask) for k, v in value.items()}
    return value if all(pairs[k] is v for k, v in value.items()) else pairs


def _masked_items(value: list[Any] | tuple[Any, ...], mask: Masker) -> Any:
    items = [masked(v, mask) for v in value]
    if all(a is b for a, b in zip(items, value, strict=True)):
        return value
    return items if isinstance(value, list) else tuple(items)


_INIT_NAMES: dict[type, tuple[str, ...]] = {}


def _init_names(cls: type) -> tuple[str, ...]:
    """The fields ``replace`` takes, per class (``fields()`` on every value costs per turn)."""
    names = _INIT_NAMES.get(cls)
    if names is None:
        names = _INIT_NAMES[cls] = tuple(f.name for f in fields(cls) if f.init)
    return names


def _masked_dataclass(value: Any, mask: Masker) -> Any:
    changes: dict[str, Any] = {}
    for name in _init_names(type(value)):
        old = getattr(value, name)
        if old is None:
            continue  # most optional fields: no walk
        new = mask.mask(old) if type(old) is str else masked(old, mask)
        if new is not old:
            changes[name] = new
    return replace(value, **changes) if changes else value
