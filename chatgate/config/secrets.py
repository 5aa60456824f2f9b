"""Secret handling: strength check for the API token and collection of every secret value."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, SecretStr

_PLACEHOLDERS = frozenset(
    {"changeme", "change-me", "secret", "password", "token", "admin", "test", "example", "default"}
)
SECRET_KEYS = frozenset({"token", "api_key", "api_token", "secret", "secret_token", "url"})
SECRET_SUFFIXES = ("_token", "_key", "secret", "password")
SECRET_ENV_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "URL")
MIN_TOKEN_LENGTH = 24
MIN_DISTINCT_CHARS = 10


def is_secret_key(key: str | int) -> bool:
    """A config key whose value is a credential (its value is never echoed)."""
    return isinstance(key, str) and (key in SECRET_KEYS or key.endswith(SECRET_SUFFIXES))


def is_secret_env(name: str) -> bool:
    """An environment variable whose value is presumably a credential (`OPENAI_API_KEY`)."""
    upper = name.upper()
    return any(word in upper for word in SECRET_ENV_WORDS)


def weak_token_reason(token: str) -> str | None:
    """Why ``token`` is too weak to guard the API, or None when it is acceptable."""
    if token.lower() in _PLACEHOLDERS or any(p in token.lower() for p in ("changeme", "xxxx")):
        return "is a placeholder"
    if len(token) < MIN_TOKEN_LENGTH:
        return f"is shorter than {MIN_TOKEN_LENGTH} characters"
    if len(set(token)) < MIN_DISTINCT_CHARS:
        return f"has fewer than {MIN_DISTINCT_CHARS} distinct characters"
    return None


def collect_secrets(value: Any) -> set[str]:
    """Every non-empty SecretStr value reachable from a model (for log/exception redaction)."""
    found: set[str] = set()
    _collect(value, found)
    return found


def _url_password(text: str) -> set[str]:
    """The password of a URL secret (``redis://:pw@host``), masked on its own too."""
    if "://" not in text:
        return set()
    try:
        password = urlsplit(text).password
    except ValueError:
        return set()
    return {unquote(password)} if password else set()


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, SecretStr):
        text = value.get_secret_value()
        if text:
            found.add(text)
            found.update(_url_password(text))
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            _collect(getattr(value, name), found)
        for extra in (value.model_extra or {}).values():
            _collect(extra, found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, found)
