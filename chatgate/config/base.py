"""Shared pydantic base and small field helpers for gateway.yaml models."""

from __future__ import annotations

from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BaseModel, ConfigDict, SecretStr


class StrictModel(BaseModel):
    """Rejects unknown keys and is immutable once loaded."""

    # Floats are finite: `.inf` seconds pass a `gt=0` bound and then overflow where used.
    # Validators are built on first use, not at import: the loader imports every platform's
    # models, and a section nested in a validated one needs no validator of its own.
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False, defer_build=True
    )


def secret_value(secret: SecretStr | None) -> str | None:
    """The secret's text, or None when unset or empty (an unset ${VAR} means "not configured")."""
    if secret is None:
        return None
    value = secret.get_secret_value()
    return value or None


def string_list(value: Any) -> Any:
    """Coerce scalar ids (YAML ints) in a list to strings; reject the legacy CSV form with a hint.

    A lone id (``allowed_users: 12345``) is the one-item case of the legacy comma-separated form.
    """
    if isinstance(value, str | int) and not isinstance(value, bool):
        raise ValueError(
            "expected a list; a comma-separated string or a lone id is the legacy form "
            "(run `chatgate config migrate` to convert it)"
        )
    if isinstance(value, list):
        return [
            str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for v in value
        ]
    return value


def time_zone(value: str) -> str:
    """`value` when it names a time zone, so a bad `tz:` fails at load and not at a run."""
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{value!r} is not a time zone name (e.g. Europe/Berlin)") from None
    return value


TimeZone = Annotated[str, AfterValidator(time_zone)]
