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
    plugins, issues = _validate_plugin_channels(data, src, info, plugin_models)
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
        warnings=warnings,
        raw=data,
    )


def _validate_plugin_channels(
    data: dict[str, Any],
    src: YamlSource,
    info: Interpolation,
    plugin_models: Mapping[str, type[BaseModel]],
) -> tuple[dict[str, BaseModel], list[ConfigIssue]]:
    channels = data.get("channels")
    if not isinstance(channels, dict):
        return {}, []
    builtin = set(GatewayConfig.model_fields["channels"].annotation.model_fields)  # type: ignore[union-attr]
    plugins: dict[str, BaseModel] = {}
    issues: list[ConfigIssue] = []
    for name in [n for n in channels if n not in builtin]:
        section = channels.pop(name)
        model = plugin_models.get(name)
        if model is None:
            known = ", ".join(sorted(builtin | set(plugin_models)))
            issues.append(
                src.issue(("channels", name), f"unknown channel '{name}' (known: {known})")
            )
            continue
        try:
            plugins[name] = model.model_validate(section or {})
        except ValidationError as exc:
            issues.extend(
                issues_from_validation(exc, src, info, prefix=("channels", name), model=model)
            )
    return plugins, issues


def _cross_check(
    config: GatewayConfig, src: YamlSource, plugins: Mapping[str, BaseModel]
) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    agents = set(config.agents)

    def need_agent(name: str, path: tuple[str | int, ...]) -> None:
        if name not in agents:
            known = ", ".join(sorted(agents)) or "none defined"
            issues.append(src.issue(path, f"unknown agent '{name}' (agents: {known})"))

    channels = config.channels
    configured = {n for n in type(channels).model_fields if getattr(channels, n) is not None}
    configured |= set(plugins)
    if channels.telegram is not None:
        need_agent(channels.telegram.agent, ("channels", "telegram", "agent"))
    seen_paths: dict[str, str] = {}
    if channels.telegram is not None and channels.telegram.mode == "webhook":
        seen_paths[channels.telegram.webhook.path] = "channels.telegram.webhook.path"
    if channels.webhook is not None:
        for name, route in channels.webhook.routes.items():
            base = ("channels", "webhook", "routes", name)
            need_agent(route.agent, (*base, "agent"))
            if route.path.startswith(RESERVED_PATHS):
                issues.append(
                    src.issue((*base, "path"), f"'{route.path}' is reserved by the gateway")
                )
            elif route.path in seen_paths:
                issues.append(
                    src.issue(
                        (*base, "path"), f"'{route.path}' is also used by {seen_paths[route.path]}"
                    )
                )
            seen_paths[route.path] = ".".join(map(str, base)) + ".path"
            if route.deliver is not None:
                target_channel = route.deliver.to.split(":", 1)[0]
                if target_channel not in configured:
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
