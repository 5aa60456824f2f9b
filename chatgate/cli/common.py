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
DEFAULT_PATHS = (Path("gateway.yaml"), Path("/etc/chatgate/gateway.yaml"))


def config_path(given: str | None) -> Path:
    if given:
        return Path(given)
    env = os.environ.get("CHATGATE_CONFIG")
    if env:
        return Path(env)
    for candidate in DEFAULT_PATHS:
        if candidate.exists():
            return candidate
    return DEFAULT_PATHS[0]


def die(message: str, code: int) -> NoReturn:
    print(f"chatgate: {message}", file=sys.stderr)
    raise SystemExit(code)


def load_or_exit(given: str | None) -> LoadedConfig:
    """Load the config; on any config problem print it and exit 78 (EX_CONFIG)."""
    from chatgate.channels.registry import ChannelRegistry

    path = config_path(given)
    try:
        return load_config(path, catalog=ChannelRegistry())
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
