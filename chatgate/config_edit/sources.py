"""The effective config, key by key, with where each value came from: a line of the file, an
environment variable (and the line naming it), a secret file, or the built-in default."""

from __future__ import annotations

import re
from typing import Any

from chatgate.config.errors import ConfigError, KeyPath, format_path
from chatgate.config.loader import LoadedConfig
from chatgate.config.redact import redacted_dict
from chatgate.config.source import YamlSource, parse_yaml
from chatgate.config_edit.document import leaves
from chatgate.config_edit.secrets import at

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")
FILE_SUFFIX = "_file"


def effective_keys(loaded: LoadedConfig, text: str) -> list[dict[str, Any]]:
    """Every leaf of the running config (secrets masked) with its source in ``text``."""
    name = loaded.path.name
    try:
        src: YamlSource | None = parse_yaml(text, name)
    except ConfigError:
        src = None
    return [
        {"key": format_path(path), "value": value, "source": source_of(path, src, name)}
        for path, value in leaves(redacted_dict(loaded))
    ]


def source_of(path: KeyPath, src: YamlSource | None, name: str) -> str:
    if src is None:
        return "unknown (the file does not parse)"
    line = src.lines.get(path)
    if line is None and path and isinstance(path[-1], str):
        file_key = (*path[:-1], path[-1] + FILE_SUFFIX)
        file_line = src.lines.get(file_key)
        if file_line is not None:
            return f"secret file {at(src.data, file_key)} ({name}:{file_line})"
    if line is None:
        inherited = src.line_of(path)
        return "default" if inherited is None or not _written(src, path) else f"{name}:{inherited}"
    raw = at(src.data, path)
    names = _VAR.findall(raw) if isinstance(raw, str) else []
    if names:
        return f"env {', '.join(dict.fromkeys(names))} ({name}:{line})"
    return f"{name}:{line}"


def _written(src: YamlSource, path: KeyPath) -> bool:
    """Whether a parent of ``path`` is written as a scalar or list the model expanded (rare:
    a value given whole); a key under a written mapping that is absent is a default."""
    for end in range(len(path) - 1, 0, -1):
        if path[:end] in src.lines:
            return not isinstance(at(src.data, path[:end]), dict)
    return False
