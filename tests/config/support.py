"""Helpers for the config tests: write a gateway.yaml, load it, find the issue at a key path."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest
from pydantic import BaseModel

from chatgate.channels.descriptor import ChannelDescriptor
from chatgate.channels.registry import ChannelRegistry
from chatgate.config import ConfigError, ConfigIssue, LoadedConfig, load_config
from chatgate.config.errors import format_path

CONFIG_NAME = "gateway.yaml"
STRONG_TOKEN = "Zq8vN2kLp4Rt7Wx1Yc5Bm9Hd3Gf6Js0A"


def yaml_text(text: str) -> str:
    """Dedent a test config so its first content line is line 1."""
    return textwrap.dedent(text).lstrip("\n")


def write_config(directory: Path, text: str, name: str = CONFIG_NAME) -> Path:
    path = directory / name
    path.write_text(yaml_text(text), encoding="utf-8")
    return path


def catalog(plugin_models: Mapping[str, type[BaseModel]] | None = None) -> ChannelRegistry:
    """The built-in channels plus plugin platforms described only by their config models."""
    registry = ChannelRegistry(plugins=False)
    for name, model in (plugin_models or {}).items():
        registry.register(
            name, ChannelDescriptor(platform=name, config_model=model, adapter="tests:absent")
        )
    return registry


def load(
    directory: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    plugin_models: Mapping[str, type[BaseModel]] | None = None,
) -> LoadedConfig:
    """Load ``text`` as gateway.yaml with an explicit (default empty) environment."""
    path = write_config(directory, text)
    return load_config(path, env=dict(env or {}), catalog=catalog(plugin_models))


def load_error(
    directory: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    plugin_models: Mapping[str, type[BaseModel]] | None = None,
) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(directory, text, env, plugin_models)
    return info.value


def issue_at(error: ConfigError, path: str) -> ConfigIssue:
    """The single issue reported for ``path`` (fails listing every issue otherwise)."""
    found = [issue for issue in error.issues if format_path(issue.path) == path]
    assert len(found) == 1, f"expected one issue at {path}, got:\n{error.render()}"
    return found[0]


def assert_issue(error: ConfigError, path: str, line: int, fragment: str) -> None:
    """The issue names ``path`` and ``gateway.yaml:line`` and says ``fragment``."""
    issue = issue_at(error, path)
    assert issue.line == line, error.render()
    assert fragment in issue.message, error.render()
    rendered = error.render()
    assert f"{path}: " in rendered
    assert f"({CONFIG_NAME}:{line})" in rendered
