"""Load gateway.yaml: parse with lines, interpolate, read secret files, validate, cross-check."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from chatgate.config.base import secret_value
from chatgate.config.channel_models import (
    ChannelsConfig,
    ChatChannelConfig,
    TelegramChannelConfig,
    WebhookChannelConfig,
)
from chatgate.config.errors import ConfigError, ConfigIssue
from chatgate.config.interpolate import Interpolation, interpolate
from chatgate.config.migrate import version_issue
from chatgate.config.models import GatewayConfig
from chatgate.config.secrets import collect_secrets, weak_token_reason
from chatgate.config.source import YamlSource, parse_yaml
from chatgate.config.validation import issues_from_validation, model_vocabulary

RESERVED_PATHS = ("/healthz", "/readyz", "/metrics", "/api/")


@dataclass
class LoadedConfig:
    """A validated config plus what the runtime needs around it."""

    config: GatewayConfig
    path: Path
    state_dir: Path
    secrets: frozenset[str]
    plugin_channels: dict[str, BaseModel] = field(default_factory=dict)
    channel_types: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


def load_config(
    path: str | Path,
    env: Mapping[str, str] | None = None,
    plugin_models: Mapping[str, type[BaseModel]] | None = None,
) -> LoadedConfig:
    """Load and validate ``path``; raise ConfigError naming every problem's key path and line."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            [ConfigIssue((), f"cannot read config file: {exc.strerror}", str(file))]
        ) from None
    return load_config_text(text, file, env, plugin_models)


def load_config_text(
    text: str,
    file: Path,
    env: Mapping[str, str] | None = None,
    plugin_models: Mapping[str, type[BaseModel]] | None = None,
) -> LoadedConfig:
    src = parse_yaml(text, file.name)
    if not isinstance(src.data, dict):
        raise ConfigError([src.issue((), "the config must be a mapping of sections")])
    warnings: list[str] = []
    problem = version_issue(src.data)
    if problem is not None:
        raise ConfigError([src.issue(("config_version",), problem)])
    if "config_version" not in src.data:
        warnings.append("config has no config_version stamp; run `chatgate config migrate`")
    base_dir = file.resolve().parent
    info = interpolate(src, os.environ if env is None else env, base_dir)
    data = src.data
    plugin_models = dict(plugin_models or {})
    plugins, channel_types, issues = _validate_plugin_channels(data, src, info, plugin_models)
    try:
        config = GatewayConfig.model_validate(data)
    except ValidationError as exc:
        vocab = model_vocabulary(GatewayConfig, *plugin_models.values())
        issues.extend(issues_from_validation(exc, src, info, vocabulary=vocab, model=GatewayConfig))
        raise ConfigError(issues) from None
    issues.extend(_cross_check(config, src, plugins))
    if issues:
        raise ConfigError(issues)
    state_dir = config.gateway.state_dir
    if not state_dir.is_absolute():
        state_dir = base_dir / state_dir
    secrets = collect_secrets(config) | {s for m in plugins.values() for s in collect_secrets(m)}
    return LoadedConfig(
        config=config,
        path=file,
        state_dir=state_dir,
        secrets=frozenset(secrets),
        plugin_channels=plugins,
        channel_types=channel_types,
        warnings=warnings,
        raw=data,
    )


def _validate_plugin_channels(
    data: dict[str, Any],
    src: YamlSource,
    info: Interpolation,
    plugin_models: Mapping[str, type[BaseModel]],
) -> tuple[dict[str, BaseModel], dict[str, str], list[ConfigIssue]]:
    """Validate channel sections outside the typed built-ins: plugins and extra instances.

    A section named after a plugin uses that plugin's model; any other name needs `type:` naming
    a platform (e.g. a second Telegram bot: `support_bot: {type: telegram, token: ...}`).
    """
    channels = data.get("channels")
    if not isinstance(channels, dict):
        return {}, {}, []
    builtin = _builtin_channel_models()
    models = {**builtin, **plugin_models}
    types = {name: name for name in builtin if channels.get(name) is not None}
    extras: dict[str, BaseModel] = {}
    issues: list[ConfigIssue] = []
    for name in [n for n in channels if n not in builtin]:
        section = channels.pop(name)
        section = dict(section) if isinstance(section, dict) else section
        platform = name
        if isinstance(section, dict) and "type" in section:
            platform = str(section.pop("type"))
            if platform not in models:
                known = ", ".join(sorted(models))
                issues.append(
                    src.issue(
                        ("channels", name, "type"),
                        f"unknown channel type '{platform}' (known: {known})",
                    )
                )
                continue
        model = models.get(platform) if platform != name or name in plugin_models else None
        if model is None:
            known = ", ".join(sorted(models))
            issues.append(
                src.issue(
                    ("channels", name),
                    f"unknown channel '{name}' (known: {known}; a further instance needs `type:`)",
                )
            )
            continue
        try:
            extras[name] = model.model_validate(section or {})
            types[name] = platform
        except ValidationError as exc:
            issues.extend(
                issues_from_validation(exc, src, info, prefix=("channels", name), model=model)
            )
    return extras, types, issues


def _builtin_channel_models() -> dict[str, type[BaseModel]]:
    fields = ChannelsConfig.model_fields
    out: dict[str, type[BaseModel]] = {}
    for name, field_info in fields.items():
        for arg in getattr(field_info.annotation, "__args__", ()):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                out[name] = arg
    return out


def channel_sections(
    config: GatewayConfig, extras: Mapping[str, BaseModel]
) -> dict[str, BaseModel]:
    """Every configured channel section by instance name (typed built-ins, plugins, extra instances)."""
    channels = config.channels
    sections: dict[str, BaseModel] = {
        n: getattr(channels, n)
        for n in type(channels).model_fields
        if getattr(channels, n) is not None
    }
    sections.update(extras)
    return sections


def _cross_check(
    config: GatewayConfig, src: YamlSource, plugins: Mapping[str, BaseModel]
) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    agents = set(config.agents)

    def need_agent(name: str, path: tuple[str | int, ...]) -> None:
        if name not in agents:
            known = ", ".join(sorted(agents)) or "none defined"
            issues.append(src.issue(path, f"unknown agent '{name}' (agents: {known})"))

    sections = channel_sections(config, plugins)
    seen_paths: dict[str, str] = {}

    def claim(path: str, where: tuple[str | int, ...]) -> None:
        if path.startswith(RESERVED_PATHS):
            issues.append(src.issue(where, f"'{path}' is reserved by the gateway"))
        elif path in seen_paths:
            issues.append(src.issue(where, f"'{path}' is also used by {seen_paths[path]}"))
        seen_paths[path] = ".".join(map(str, where))

    for name, section in sections.items():
        if isinstance(section, ChatChannelConfig):
            need_agent(section.agent, ("channels", name, "agent"))
        if isinstance(section, TelegramChannelConfig) and section.mode == "webhook":
            claim(section.webhook.path, ("channels", name, "webhook", "path"))
        if not isinstance(section, WebhookChannelConfig):
            continue
        for route_name, route in section.routes.items():
            base = ("channels", name, "routes", route_name)
            need_agent(route.agent, (*base, "agent"))
            claim(route.path, (*base, "path"))
            if route.deliver is not None:
                target_channel = route.deliver.to.split(":", 1)[0]
                if target_channel not in sections:
                    issues.append(
                        src.issue(
                            (*base, "deliver", "to"),
                            f"channel '{target_channel}' is not configured",
                        )
                    )
    for index, binding in enumerate(config.routes):
        need_agent(binding.agent, ("routes", index, "agent"))
    issues.extend(_check_api_token(config, src))
    return issues


def _check_api_token(config: GatewayConfig, src: YamlSource) -> list[ConfigIssue]:
    token = secret_value(config.gateway.api_token)
    path = ("gateway", "api_token")
    if token is None:
        if not is_loopback(config.gateway.http.host):
            return [
                src.issue(
                    path,
                    f"required when gateway.http.host ({config.gateway.http.host}) is not loopback",
                )
            ]
        return []
    reason = weak_token_reason(token)
    if reason is not None:
        return [src.issue(path, f"too weak: it {reason}; use e.g. `openssl rand -hex 32`")]
    return []


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
