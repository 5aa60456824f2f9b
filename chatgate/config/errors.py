"""Config errors that name the key path and the YAML line, and the EX_CONFIG exit code."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

EX_CONFIG = 78  # sysexits.h; systemd units set RestartPreventExitStatus=78

KeyPath = tuple[str | int, ...]


def format_path(path: KeyPath) -> str:
    """Render ("channels", "webhook", "routes", 0) as channels.webhook.routes[0]."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a config file."""

    path: KeyPath
    message: str
    file: str | None = None
    line: int | None = None

    def render(self) -> str:
        where = ""
        if self.file is not None:
            where = f" ({self.file}:{self.line})" if self.line else f" ({self.file})"
        return f"{format_path(self.path)}: {self.message}{where}"


class ConfigError(Exception):
    """Raised for any invalid config; carries every issue found, each with path and line."""

    exit_code = EX_CONFIG

    def __init__(self, issues: Iterable[ConfigIssue]) -> None:
        self.issues: Sequence[ConfigIssue] = tuple(issues)
        super().__init__(self.render())

    def render(self) -> str:
        lines = [issue.render() for issue in self.issues]
        if len(lines) == 1:
            return f"invalid config: {lines[0]}"
        return "invalid config:\n" + "\n".join(f"  - {line}" for line in lines)
