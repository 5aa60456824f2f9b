"""How `chatgate doctor` reports: text or one JSON document, filtered by check id, and the exit code.

Check ids are stable dotted names (``config.version``, ``state.dir``, ``telegram.token``,
``webhook.<route>.secret``, ``agent.<name>.key``) so scripts can select and react to them.
Exit codes: 0 all good, 1 warnings with ``--strict``, 2 a failed check, 78 an invalid config.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from chatgate.config.errors import EX_CONFIG
from chatgate.config.findings import Finding, Level

CONFIG_CHECK = "config.load"  # a failure here means nothing else could be checked
CONFIG_FREE = "supply"  # checks of the interpreter itself: they run whatever the config
EXIT_OK = 0
EXIT_WARNINGS = 1
EXIT_FAILED = 2
REPORT_VERSION = 1


def _matches(check: str, prefixes: Sequence[str]) -> bool:
    return any(check == p or check.startswith(p) for p in prefixes)


def select(
    findings: Iterable[Finding], *, only: Sequence[str] = (), skip: Sequence[str] = ()
) -> list[Finding]:
    """Keep the findings whose id starts with one of ``only`` (all if empty), minus ``skip``."""
    return [
        f
        for f in findings
        if (not only or _matches(f.check, only)) and not (skip and _matches(f.check, skip))
    ]


def config_free(only: Sequence[str]) -> bool:
    """Whether ``--only`` selects checks that need no config alone (the supply chain): on an
    invalid config their own results decide the exit code, not the config."""
    return bool(only) and all(prefix.startswith(CONFIG_FREE) for prefix in only)


def exit_code(findings: Iterable[Finding], *, strict: bool = False) -> int:
    levels = [(f.check, f.level) for f in findings]
    if (CONFIG_CHECK, Level.FAIL) in levels:
        return EX_CONFIG
    if any(level is Level.FAIL for _, level in levels):
        return EXIT_FAILED
    if strict and any(level is Level.WARN for _, level in levels):
        return EXIT_WARNINGS
    return EXIT_OK


def render(findings: Iterable[Finding]) -> str:
    lines = []
    for f in findings:
        lines.append(f"{f.level.value:<5} {f.check:<24} {f.detail}")
        if f.fix:
            lines.append(f"{'':<30} fix: {f.fix}")
    return "\n".join(lines)


def as_json(findings: Sequence[Finding], code: int) -> str:
    """One JSON document: every check with id, severity, key path and fix, plus a summary."""
    counts = {level.value: 0 for level in Level}
    for f in findings:
        counts[f.level.value] += 1
    doc = {
        "version": REPORT_VERSION,
        "exit_code": code,
        "summary": counts,
        "checks": [
            {
                "id": f.check,
                "severity": f.level.value,
                "detail": f.detail,
                "key": f.key,
                "fix": f.fix,
            }
            for f in findings
        ],
    }
    return json.dumps(doc, indent=2)
