"""Config version stamp and declarative migration rules applied by `chatgate config migrate`.

Each rule pairs a detector with a fix over the raw (pre-interpolation) document, so a migration is
a one-time repair of the file, never a permanent load-time heuristic. A new breaking change appends
a rule and bumps CONFIG_VERSION.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatgate.config.errors import ConfigError
from chatgate.config.models import CONFIG_VERSION
from chatgate.config.source import parse_yaml

_ID_LISTS = ("allowed_users", "blocked_users", "allowed_chats")
_NO_GROUP_POLICY = frozenset({"webhook"})  # channels without a group chat concept


@dataclass(frozen=True)
class MigrationRule:
    name: str
    reason: str
    detect: Callable[[dict[str, Any]], bool]
    fix: Callable[[dict[str, Any]], None]


def version_issue(data: dict[str, Any]) -> str | None:
    """Why the config_version stamp is unusable, or None."""
    if "config_version" not in data:
        return None
    value = data["config_version"]
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be an integer (current is {CONFIG_VERSION})"
    if value > CONFIG_VERSION:
        shown = value if value.bit_length() < 64 else "the stamp"
        return (
            f"{shown} is newer than this chatgate supports ({CONFIG_VERSION}); "
            "upgrade chatgate instead of editing the stamp"
        )
    if value < 0:
        return "must not be negative"
    return None


def _chat_channels(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    channels = data.get("channels")
    if isinstance(channels, dict):
        for name, section in channels.items():
            if isinstance(section, dict):
                yield name, section


def _legacy_ids(value: Any) -> bool:
    """A CSV string, or a lone id (YAML reads `allowed_users: 12345` as an int)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def _csv_lists(data: dict[str, Any]) -> bool:
    return any(_legacy_ids(s.get(k)) for _, s in _chat_channels(data) for k in _ID_LISTS)


def _fix_csv_lists(data: dict[str, Any]) -> None:
    for _, section in _chat_channels(data):
        for key in _ID_LISTS:
            value = section.get(key)
            if isinstance(value, str):
                section[key] = [item.strip() for item in value.split(",") if item.strip()]
            elif _legacy_ids(value):
                section[key] = [value]


def _missing_group_policy(data: dict[str, Any]) -> bool:
    return any(
        "group_policy" not in s for n, s in _chat_channels(data) if n not in _NO_GROUP_POLICY
    )


def _fix_group_policy(data: dict[str, Any]) -> None:
    for name, section in _chat_channels(data):
        if name in _NO_GROUP_POLICY or "group_policy" in section:
            continue
        keys = list(section)
        position = keys.index("dm_policy") + 1 if "dm_policy" in keys else len(keys)
        insert = getattr(section, "insert", None)
        if callable(insert):  # ruamel CommentedMap keeps comments and order
            insert(position, "group_policy", "mention_only")
        else:
            section["group_policy"] = "mention_only"


RULES: tuple[MigrationRule, ...] = (
    MigrationRule(
        "allowed_users_csv_to_list",
        "allowed_users/blocked_users/allowed_chats: comma-separated string → list",
        _csv_lists,
        _fix_csv_lists,
    ),
    MigrationRule(
        "group_policy_default",
        "group_policy missing → mention_only (the secure default, stated explicitly)",
        _missing_group_policy,
        _fix_group_policy,
    ),
)


def migrate_document(data: dict[str, Any]) -> list[str]:
    """Apply every rule whose detector fires, stamp the version; return the applied reasons."""
    problem = version_issue(data)
    if problem is not None:
        raise ValueError(f"config_version: {problem}")
    applied = []
    for rule in RULES:
        if rule.detect(data):
            rule.fix(data)
            applied.append(f"{rule.reason} [{rule.name}]")
    if data.get("config_version") != CONFIG_VERSION:
        if "config_version" in data:
            data["config_version"] = CONFIG_VERSION
        else:
            insert = getattr(data, "insert", None)
            if callable(insert):
                insert(0, "config_version", CONFIG_VERSION)
            else:
                data["config_version"] = CONFIG_VERSION
        applied.append(f"stamped config_version: {CONFIG_VERSION}")
    return applied


@dataclass(frozen=True)
class MigrationResult:
    applied: list[str]
    backup: Path | None


def migrate_file(path: Path, *, dry_run: bool = False) -> MigrationResult:
    """Migrate ``path`` in place, keeping comments; the original is copied to ``<path>.bak`` first.

    Raises ValueError (naming the key path and line, never a value) for an unparsable file.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    text = path.read_text(encoding="utf-8")
    try:
        parse_yaml(text, path.name)  # duplicate keys and syntax errors, reported like the loader
    except ConfigError as exc:
        raise ValueError("; ".join(issue.render() for issue in exc.issues)) from None
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    try:
        data = yaml.load(text)
    except YAMLError as exc:
        mark = exc.problem_mark if isinstance(exc, MarkedYAMLError) else None
        where = f" ({path.name}:{mark.line + 1})" if mark is not None else ""
        raise ValueError(f"YAML error{where}") from None
    keep = ""
    if data is None:  # an empty or comment-only file: keep its comments above the new stamp
        data = {}
        keep = f"{text.rstrip()}\n" if text.strip() else ""
    if not isinstance(data, dict):
        raise ValueError("the config must be a mapping of sections")
    applied = migrate_document(data)
    if not applied or dry_run:
        return MigrationResult(applied, None)
    backup = path.with_name(path.name + ".bak")
    shutil.copy2(path, backup)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(keep)
        yaml.dump(data, fh)
    tmp.replace(path)
    return MigrationResult(applied, backup)
