"""Load gateway.yaml: parse with lines, interpolate, read secret files, validate, cross-check."""

from __future__ import annotations

import ipaddress
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from chatgate.config.base import secret_value
from chatgate.config.budget_checks import budget_issues
from chatgate.config.channel_models import ChatChannelConfig
from chatgate.config.claims import AgentRef, ChannelRef, Claim, LoopbackOnly, PathClaim
from chatgate.config.errors import ConfigError, ConfigIssue, KeyPath, format_path
from chatgate.config.interpolate import Interpolation, interpolate
from chatgate.config.migrate import version_issue
from chatgate.config.models import GatewayConfig
from chatgate.config.secrets import collect_secrets, weak_token_reason
from chatgate.config.source import YamlSource, parse_yaml
from chatgate.config.tool_checks import tool_issues
from chatgate.config.validation import issues_from_validation, model_vocabulary

RESERVED_PATHS = ("/healthz", "/readyz", "/metrics", "/api/", "/dashboard", "/dashboard/")


class ChannelCatalog(Protocol):
    """The channel platforms config can name (the channel registry provides this)."""

    def config_models(self) -> Mapping[str, type[BaseModel]]: ...

    def claims(self, platform: str, section: BaseModel) -> Iterable[Claim]: ...


@dataclass(frozen=True)
class ChannelSection:
    """One configured channel instance: its name, its platform and its validated section."""

    name: str
    platform: str
    config: BaseModel

    @property
    def enabled(self) -> bool:
        return bool(getattr(self.config, "enabled", True))

    @property
    def chat(self) -> ChatChannelConfig | None:
        """The shared chat keys (admission, agent, streaming), when this is a chat channel."""
        return self.config if isinstance(self.config, ChatChannelConfig) else None


@dataclass
class LoadedConfig:
    """A validated config plus what the runtime needs around it."""

    config: GatewayConfig
    path: Path
    state_dir: Path
    secrets: frozenset[str]
    channels: dict[str, ChannelSection] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    def channel(self, name: str) -> ChannelSection | None:
        return self.channels.get(name)


def load_config(
    path: str | Path, env: Mapping[str, str] | None = None, *, catalog: ChannelCatalog
) -> LoadedConfig:
    """Load and validate ``path``; raise ConfigError naming every problem's key path and line."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            [ConfigIssue((), f"cannot read config file: {exc.strerror}", str(file))]
        ) from None
    except UnicodeDecodeError as exc:
        message = f"config file is not UTF-8 (bad byte at offset {exc.start})"
        raise ConfigError([ConfigIssue((), message, str(file))]) from None
    except ValueError:
        raise ConfigError([ConfigIssue((), "config file path is not valid", None)]) from None
    return load_config_text(text, file, env, catalog=catalog)


def load_config_text(
    text: str, file: Path, env: Mapping[str, str] | None = None, *, catalog: ChannelCatalog
) -> LoadedConfig:
    """Validate ``text``; channel sections are checked with the models ``catalog`` (the channel
    registry) provides, so config itself names no platform."""
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
    models = catalog.config_models()
    channels, issues = _validate_channels(data, src, info, models)
    try:
        config = GatewayConfig.model_validate(data)
    except ValidationError as exc:
        vocab = model_vocabulary(GatewayConfig, *models.values())
        issues.extend(issues_from_validation(exc, src, info, vocabulary=vocab, model=GatewayConfig))
        raise ConfigError(issues) from None
    issues.extend(_cross_check(config, src, channels, catalog))
    if issues:
        raise ConfigError(issues)
    warnings.extend(_past_one_shots(config, src, time.time()))
    state_dir = config.gateway.state_dir
    if not state_dir.is_absolute():
        state_dir = base_dir / state_dir
    secrets = collect_secrets(config)
    for section in channels.values():
        secrets |= collect_secrets(section.config)
    return LoadedConfig(
        config=config,
        path=file,
        state_dir=state_dir,
        secrets=frozenset(secrets),
        channels=channels,
        warnings=warnings,
        raw=data,
    )


def _past_one_shots(config: GatewayConfig, src: YamlSource, now: float) -> list[str]:
    """One-shot jobs whose `at` has passed: they will not run again. A warning, not an error:
    a job that fired must not make the file invalid."""
    found = []
    for name, spec in config.schedules.items():
        if spec.at is not None and spec.at.timestamp() <= now:
            path = ("schedules", name, "at")
            line = src.line_of(path)
            where = f" ({src.file}:{line})" if line is not None else ""
            found.append(
                f"{format_path(path)}: {spec.at.isoformat()} has passed; this one-shot job "
                f"will not run (remove it or give a future time){where}"
            )
    return found


def _validate_channels(
    data: dict[str, Any],
    src: YamlSource,
    info: Interpolation,
    models: Mapping[str, type[BaseModel]],
) -> tuple[dict[str, ChannelSection], list[ConfigIssue]]:
    """Validate each `channels.<name>` section with its platform's model (taken out of ``data``).

    A section named after a platform uses that platform's model; any other name needs `type:`
    naming a platform (e.g. a second Telegram bot: `support_bot: {type: telegram, token: ...}`).
    An empty section (`telegram:` with nothing under it) is not configured.
    """
    channels = data.pop("channels", None)
    if channels is None:
        return {}, []
    if not isinstance(channels, dict):
        return {}, [src.issue(("channels",), "must be a mapping of channel name to section")]
    out: dict[str, ChannelSection] = {}
    issues: list[ConfigIssue] = []
    known = ", ".join(sorted(models))
    for name, raw in channels.items():
        section = dict(raw) if isinstance(raw, dict) else raw
        platform = str(name)
        if isinstance(section, dict) and "type" in section:
            platform = str(section.pop("type"))
            if platform not in models:
                issues.append(
                    src.issue(
                        ("channels", name, "type"),
                        f"unknown channel type '{platform}' (known: {known})",
                    )
                )
                continue
        model = models.get(platform)
        if model is None:
            issues.append(
                src.issue(
                    ("channels", name),
                    f"unknown channel '{name}' (known: {known}; a further instance needs `type:`)",
                )
            )
            continue
        if section is None and platform == name:
            continue
        try:
            out[str(name)] = ChannelSection(
                str(name), platform, model.model_validate(section or {})
            )
        except ValidationError as exc:
            issues.extend(
                issues_from_validation(exc, src, info, prefix=("channels", name), model=model)
            )
    return out, issues


def _cross_check(
    config: GatewayConfig,
    src: YamlSource,
    channels: Mapping[str, ChannelSection],
    catalog: ChannelCatalog,
) -> list[ConfigIssue]:
    """What sections refer to exists, and no two of them (nor the gateway) share an HTTP path."""
    issues: list[ConfigIssue] = []
    agents = set(config.agents)
    claimed: list[tuple[PathClaim, str]] = []

    def need_agent(name: str, path: KeyPath) -> None:
        if name not in agents:
            listed = ", ".join(sorted(agents)) or "none defined"
            issues.append(src.issue(path, f"unknown agent '{name}' (agents: {listed})"))

    def claim_path(claim: PathClaim, where: KeyPath) -> None:
        if any(_overlap(claim, PathClaim(r, (), r.endswith("/"))) for r in RESERVED_PATHS):
            issues.append(src.issue(where, f"'{claim.path}' is reserved by the gateway"))
        else:
            for other, owner in claimed:
                if _overlap(claim, other):
                    issues.append(src.issue(where, f"'{claim.path}' is also used by {owner}"))
                    break
        claimed.append((claim, format_path(where)))

    for name, section in channels.items():
        base: KeyPath = ("channels", name)
        for claim in catalog.claims(section.platform, section.config):
            where = (*base, *claim.key)
            if isinstance(claim, AgentRef):
                need_agent(claim.agent, where)
            elif isinstance(claim, PathClaim):
                claim_path(claim, where)
            elif isinstance(claim, ChannelRef) and claim.channel not in channels:
                issues.append(src.issue(where, f"channel '{claim.channel}' is not configured"))
            elif isinstance(claim, LoopbackOnly) and not is_loopback(config.gateway.http.host):
                host = config.gateway.http.host
                issues.append(
                    src.issue(
                        where,
                        f"{claim.why}, so it is only allowed while gateway.http.host is "
                        f"loopback (it is {host}); {claim.fix}",
                    )
                )
    for index, binding in enumerate(config.routes):
        need_agent(binding.agent, ("routes", index, "agent"))
    issues.extend(_schedule_issues(config, src, channels, need_agent))
    issues.extend(_check_api_token(config, src))
    issues.extend(tool_issues(config, src, channels))
    issues.extend(budget_issues(config, src))
    issues.extend(
        src.issue(("retention", "channels", name), f"channel '{name}' is not configured")
        for name in config.retention.channels
        if name not in channels
    )
    return issues


def _schedule_issues(
    config: GatewayConfig,
    src: YamlSource,
    channels: Mapping[str, ChannelSection],
    need_agent: Callable[[str, KeyPath], None],
) -> list[ConfigIssue]:
    """Each job's agent exists and each of its targets names a configured channel."""
    issues: list[ConfigIssue] = []
    for job_id, job in config.schedules.items():
        need_agent(job.agent, ("schedules", job_id, "agent"))
        for index, to in enumerate(job.deliver.to):
            channel = to.split(":", 1)[0]
            if channel not in channels:
                where = ("schedules", job_id, "deliver", "to", index)
                issues.append(src.issue(where, f"channel '{channel}' is not configured"))
    return issues


def _overlap(a: PathClaim, b: PathClaim) -> bool:
    """Two claims collide when the paths are equal or one is a prefix claim covering the other."""
    if a.path == b.path:
        return True
    return any(
        outer.prefix and inner.path.startswith(outer.path.rstrip("/") + "/")
        for outer, inner in ((a, b), (b, a))
    )


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
