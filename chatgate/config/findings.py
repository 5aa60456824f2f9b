"""A `chatgate doctor` finding: which check, how it went, what was found and how to fix it.

Shared by the doctor command and the checks channel packages contribute through their
descriptors, so every check reports the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


@dataclass(frozen=True)
class Finding:
    check: str
    level: Level
    detail: str
    fix: str | None = None
    key: str | None = None  # the config key path the finding is about, when there is one
