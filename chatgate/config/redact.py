"""`chatgate config show`: the effective config with every secret redacted."""

from __future__ import annotations

from typing import Any

import yaml

from chatgate.config.loader import LoadedConfig

REDACTED = "**********"


def redacted_dict(loaded: LoadedConfig) -> dict[str, Any]:
    data: dict[str, Any] = loaded.config.model_dump(mode="json", by_alias=True)
    for name, model in loaded.plugin_channels.items():
        data["channels"][name] = model.model_dump(mode="json", by_alias=True)
    scrubbed: dict[str, Any] = scrub(data, loaded.secrets)
    return scrubbed


def scrub(value: Any, secrets: frozenset[str]) -> Any:
    """Replace SecretStr renderings and any known secret substring (e.g. in a URL)."""
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, str):
        if value == "**********":
            return REDACTED
        for secret in secrets:
            if secret and secret in value:
                value = value.replace(secret, REDACTED)
        return value
    return value


def render_yaml(loaded: LoadedConfig) -> str:
    return yaml.safe_dump(redacted_dict(loaded), sort_keys=False, allow_unicode=True)
