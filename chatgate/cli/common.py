"""Helpers shared by CLI commands: config discovery, loading with exit 78, the daemon's URL."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

from chatgate.config.errors import EX_CONFIG, ConfigError
from chatgate.config.loader import LoadedConfig, load_config

EX_UNAVAILABLE = 69
EX_USAGE = 64
SYSTEM_DIR = Path("/etc/chatgate")  # where `chatgate install-service` puts the config
SYSTEM_STATE_DIR = "/var/lib/chatgate"
DEFAULT_PATHS = (Path("gateway.yaml"), SYSTEM_DIR / "gateway.yaml")


def config_path(given: str | None) -> Path:
    if given:
        return Path(given)
    env = os.environ.get("CHATGATE_CONFIG")
    if env:
        return Path(env)
    for candidate in (DEFAULT_PATHS[0], SYSTEM_DIR / "gateway.yaml"):
        if candidate.exists():
            return candidate
    return DEFAULT_PATHS[0]


def searched() -> str:
    """Every place `config_path(None)` looked, for the error when none had a config."""
    env = os.environ.get("CHATGATE_CONFIG")
    tried = [f"$CHATGATE_CONFIG ({env or 'unset'})", f"./gateway.yaml ({Path.cwd()})",
             str(SYSTEM_DIR / "gateway.yaml")]  # fmt: skip
    return ", ".join(tried)


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of a systemd EnvironmentFile (comments, blanks and quotes handled);
    empty when it is missing or unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, eq, value = line.strip().partition("=")
        if eq and key and not key.startswith("#"):
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            out[key.strip()] = value
    return out


def config_env(path: Path) -> dict[str, str]:
    """The environment the config is read with. For the system config this is what the systemd
    unit gives the daemon (its state dir, `/etc/chatgate/env`) under the caller's own variables,
    so an operator shell finds the daemon's state dir and API token."""
    env = dict(os.environ)
    if path.absolute().parent == SYSTEM_DIR:
        defaults = {"CHATGATE_STATE_DIR": SYSTEM_STATE_DIR, **read_env_file(SYSTEM_DIR / "env")}
        env = {**defaults, **env}
    return env


def die(message: str, code: int) -> NoReturn:
    print(f"chatgate: {message}", file=sys.stderr)
    raise SystemExit(code)


def load_or_exit(given: str | None) -> LoadedConfig:
    """Load the config; on any config problem print it and exit 78 (EX_CONFIG)."""
    from chatgate.channels.registry import ChannelRegistry

    path = config_path(given)
    if given is None and not path.exists() and not os.environ.get("CHATGATE_CONFIG"):
        die(
            f"no config found; looked in {searched()}. Write a starter one with `chatgate init`"
            " or pass --config",
            EX_CONFIG,
        )
    try:
        return load_config(path, config_env(path), catalog=ChannelRegistry())
    except ConfigError as exc:
        die(str(exc), EX_CONFIG)


def api_url(loaded: LoadedConfig, override: str | None = None) -> str:
    if override:
        return override.rstrip("/")
    http = loaded.config.gateway.http
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(http.host, http.host)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{http.port}"
