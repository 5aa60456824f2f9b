"""`${VAR}` interpolation per scalar after YAML parsing, and `*_file` secret indirection.

Supported forms: `${VAR}` (empty when unset), `${VAR:-default}` (default when unset or empty),
`${VAR-default}` (default only when unset), `${VAR:?message}` (error when unset or empty) and
`$${` for a literal `${`. Interpolation happens per string scalar, so a list stays a list.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatgate.config.errors import ConfigError, ConfigIssue, KeyPath
from chatgate.config.secrets import is_secret_env, is_secret_key
from chatgate.config.source import YamlSource

_REF = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|-|:\?)([^}]*))?\}")
FILE_SUFFIX = "_file"


@dataclass
class Interpolation:
    """Which env vars fed which key paths, and which values came from secret files."""

    refs: dict[KeyPath, tuple[str, ...]] = field(default_factory=dict)
    unset: dict[KeyPath, tuple[str, ...]] = field(default_factory=dict)
    file_values: dict[KeyPath, str] = field(default_factory=dict)
    secret_texts: set[str] = field(default_factory=set)


def interpolate(src: YamlSource, env: Mapping[str, str], base_dir: Path) -> Interpolation:
    """Interpolate ``src.data`` in place, then resolve `*_file` keys; raise ConfigError on problems."""
    info = Interpolation()
    issues: list[ConfigIssue] = []
    src.data = _walk(src.data, (), env, src, info, issues)
    _collect_secret_texts(src.data, info)
    if not issues:
        _resolve_files(src.data, (), base_dir, src, info, issues)
    if issues:
        raise ConfigError(issues)
    return info


def _walk(
    value: Any,
    path: KeyPath,
    env: Mapping[str, str],
    src: YamlSource,
    info: Interpolation,
    issues: list[ConfigIssue],
) -> Any:
    if isinstance(value, dict):
        return {k: _walk(v, (*path, k), env, src, info, issues) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, (*path, i), env, src, info, issues) for i, v in enumerate(value)]
    if isinstance(value, str) and "$" in value:
        return _substitute(value, path, env, src, info, issues)
    return value


def _substitute(
    text: str,
    path: KeyPath,
    env: Mapping[str, str],
    src: YamlSource,
    info: Interpolation,
    issues: list[ConfigIssue],
) -> str:
    names: list[str] = []
    unset: list[str] = []

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name, op, arg = match.group(1), match.group(2), match.group(3) or ""
        names.append(name)
        current = env.get(name)
        if current and is_secret_env(name):
            info.secret_texts.add(current)
        if op == ":-":
            return current if current else arg
        if op == "-":
            return current if current is not None else arg
        if op == ":?":
            if not current:
                hint = arg or "must be set"
                issues.append(src.issue(path, f"environment variable {name} {hint}"))
                return ""
            return current
        if current is None:
            unset.append(name)
            return ""
        return current

    result = _REF.sub(replace, text)
    if names:
        info.refs[path] = tuple(names)
    if unset:
        info.unset[path] = tuple(unset)
    return result


def _resolve_files(
    value: Any,
    path: KeyPath,
    base_dir: Path,
    src: YamlSource,
    info: Interpolation,
    issues: list[ConfigIssue],
) -> None:
    if isinstance(value, list):
        for i, item in enumerate(value):
            _resolve_files(item, (*path, i), base_dir, src, info, issues)
        return
    if not isinstance(value, dict):
        return
    for key in list(value):
        key_path = (*path, key)
        if isinstance(key, str) and key.endswith(FILE_SUFFIX) and len(key) > len(FILE_SUFFIX):
            _read_file_key(value, key, path, base_dir, src, info, issues)
        else:
            _resolve_files(value[key], key_path, base_dir, src, info, issues)


def _read_file_key(
    value: dict[str, Any],
    key: str,
    path: KeyPath,
    base_dir: Path,
    src: YamlSource,
    info: Interpolation,
    issues: list[ConfigIssue],
) -> None:
    """``<name>_file: path`` becomes ``<name>: <the file's text>`` (remembered as a secret)."""
    child, key_path, target = value[key], (*path, key), key[: -len(FILE_SUFFIX)]
    if child in ("", None):
        del value[key]  # an unset ${VAR} for the file path means "not configured"
        return
    problem = _file_key_problem(child, value.get(target), target, key)
    if problem is not None:
        issues.append(src.issue(key_path, problem))
        return
    file_path = Path(child) if Path(child).is_absolute() else base_dir / child
    try:
        secret = read_secret_file(file_path)
    except OSError as exc:
        issues.append(src.issue(key_path, f"cannot read {file_path}: {exc.strerror}"))
        return
    except UnicodeDecodeError:
        issues.append(src.issue(key_path, f"{file_path} is not UTF-8 text"))
        return
    info.secret_texts.add(secret)
    del value[key]
    value[target] = secret
    info.file_values[(*path, target)] = str(file_path)
    src.lines.setdefault((*path, target), src.lines.get(key_path, 0))


def _file_key_problem(child: Any, direct: Any, target: str, key: str) -> str | None:
    if not isinstance(child, str) or not child:
        return "expected a file path"
    if direct not in (None, ""):
        return f"set either {target} or {key}, not both"
    if "\0" in child:
        return "the file path contains a NUL character"
    return None


def _collect_secret_texts(value: Any, info: Interpolation) -> None:
    """Remember every string written under a secret-looking key (never echoed in errors)."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if is_secret_key(key) and isinstance(child, str) and child:
                    info.secret_texts.add(child)
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)


MAX_SECRET_FILE = 64 * 1024


def read_secret_file(path: Path) -> str:
    """The stripped text of a secret file; only a regular file of at most MAX_SECRET_FILE bytes
    (a FIFO or a device would block the check forever or never end)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = fh.read(MAX_SECRET_FILE + 1)
    if len(data) > MAX_SECRET_FILE:
        raise OSError(errno.EFBIG, f"larger than {MAX_SECRET_FILE} bytes")
    return data.decode("utf-8").strip()
