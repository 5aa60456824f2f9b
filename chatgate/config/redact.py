"""`chatgate config show`: the effective config with every secret redacted."""

from __future__ import annotations

from typing import Any

import yaml

from chatgate.config.loader import LoadedConfig
from chatgate.config.masking import REDACTED, masker_for

__all__ = ["REDACTED", "redacted_dict", "render_yaml", "scrub"]


def redacted_dict(loaded: LoadedConfig) -> dict[str, Any]:
    channels: dict[str, Any] = {}
    for name, section in loaded.channels.items():
        dumped = section.config.model_dump(mode="json", by_alias=True)
        channels[name] = (
            dumped if section.platform == name else {"type": section.platform, **dumped}
        )
    data: dict[str, Any] = {}
    for key, value in loaded.config.model_dump(mode="json", by_alias=True).items():
        if key == "routes":  # in the file's order: channels come before routes
            data["channels"] = channels
        data[key] = value
    scrubbed: dict[str, Any] = scrub(data, loaded.secrets)
    return scrubbed


def scrub(value: Any, secrets: frozenset[str]) -> Any:
    """Mask every known secret (any case, URL-quoted too) and bot-token shapes in strings."""
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, str):
        return masker_for(frozenset(secrets)).mask(value)
    return value


def render_yaml(loaded: LoadedConfig) -> str:
    return yaml.safe_dump(redacted_dict(loaded), sort_keys=False, allow_unicode=True)
