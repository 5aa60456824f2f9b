"""`chatgate config check|show|migrate`."""

from __future__ import annotations

from pathlib import Path

from chatgate.cli.common import config_path, die, load_or_exit
from chatgate.config.errors import EX_CONFIG
from chatgate.config.migrate import migrate_file
from chatgate.config.redact import render_yaml


def run_check(given: str | None) -> int:
    loaded = load_or_exit(given)
    cfg = loaded.config
    channels = list(loaded.channels)
    print(
        f"{loaded.path}: OK (config_version {cfg.config_version}; agents: {', '.join(cfg.agents)}; "
        f"channels: {', '.join(channels) or 'none'})"
    )
    for warning in loaded.warnings:
        print(f"warning: {warning}")
    return 0


def run_show(given: str | None) -> int:
    print(render_yaml(load_or_exit(given)), end="")
    return 0


def run_migrate(given: str | None, *, dry_run: bool) -> int:
    path: Path = config_path(given)
    if not path.exists():
        die(f"{path}: no such config file", EX_CONFIG)
    try:
        result = migrate_file(path, dry_run=dry_run)
    except (ValueError, OSError) as exc:
        die(f"{path}: cannot migrate: {exc}", EX_CONFIG)
    if not result.applied:
        print(f"{path}: already current, nothing to migrate")
        return 0
    verb = "would apply" if dry_run else "applied"
    for reason in result.applied:
        print(f"{verb}: {reason}")
    if result.backup is not None:
        print(f"original saved as {result.backup}")
    if not dry_run:
        load_or_exit(str(path))
        print(f"{path}: migrated config is valid")
    return 0
