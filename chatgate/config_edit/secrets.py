"""Where a config holds secrets, and which of them a text writes in clear.

A secret is any `SecretStr` value of the validated config (tokens, keys, passwords, URLs that may
carry a password). From the browser one may be given only as a `${VAR}` reference or through its
`<key>_file` sibling; a clear value already in the file on disk is kept (the editor shows it
masked) but no new one is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, SecretStr

from chatgate.config.errors import KeyPath
from chatgate.config.loader import LoadedConfig

_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*")


def secret_paths(loaded: LoadedConfig) -> set[KeyPath]:
    """The key paths (as written in the file) of every secret the config can hold there."""
    found = set(_walk(loaded.config, ()))
    for name, section in loaded.channels.items():
        found.update(_walk(section.config, ("channels", name)))
    return found


def _walk(value: Any, path: KeyPath) -> Iterator[KeyPath]:
    if isinstance(value, SecretStr):
        yield path
    elif isinstance(value, BaseModel):
        for name, info in type(value).model_fields.items():
            yield from _walk(getattr(value, name), (*path, info.alias or name))
        for key, extra in (value.model_extra or {}).items():
            yield from _walk(extra, (*path, key))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*path, key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))


def at(data: Any, path: KeyPath) -> Any:
    """The value at ``path`` in parsed YAML, or None when there is none."""
    for part in path:
        if isinstance(data, list):
            inside = isinstance(part, int) and 0 <= part < len(data)
            data = data[int(part)] if inside else None
        elif isinstance(data, dict):
            data = data.get(part)
        else:
            return None
    return data


def is_clear(value: Any) -> bool:
    """Whether a value written under a secret key is the secret itself: not empty, no `${VAR}`
    reference, and not a URL without a password (`redis://127.0.0.1:6379/0`)."""
    if value is None or value == "" or isinstance(value, dict | list):
        return False
    text = str(value)
    if _REFERENCE.search(text):
        return False
    if "://" in text:
        try:
            return urlsplit(text).password is not None
        except ValueError:
            return True
    return True


def clear_paths(raw: Any, paths: set[KeyPath]) -> list[KeyPath]:
    """The secret paths whose value in the parsed (not interpolated) YAML ``raw`` is clear text."""
    return sorted((p for p in paths if is_clear(at(raw, p))), key=str)
