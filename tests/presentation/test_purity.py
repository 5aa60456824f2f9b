"""Presentation stays pure, as the architecture page says: no I/O, no asyncio, no SDK, and of
chatgate only its own modules, the policies' types and the ground floor (`chatgate.model`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import chatgate.presentation
from tests.purity import imports_of

PRESENTATION_DIR = Path(chatgate.presentation.__file__).parent
MODULES = sorted(PRESENTATION_DIR.rglob("*.py"))
CHATGATE_ALLOWED = ("chatgate.presentation", "chatgate.policies", "chatgate.model")
FORBIDDEN = {
    "aiohttp",
    "asyncio",
    "http",
    "httpx",
    "requests",
    "shutil",
    "socket",
    "sqlite3",
    "subprocess",
    "tempfile",
    "threading",
    "urllib",
}


def test_modules_found() -> None:
    assert len(MODULES) >= 5


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_imports_stay_pure(path: Path) -> None:
    bad = set()
    for name in imports_of(path):
        if name.startswith("."):
            continue  # relative: inside presentation
        if name.startswith("chatgate"):
            if not name.startswith(CHATGATE_ALLOWED):
                bad.add(name)
        elif name.split(".")[0] in FORBIDDEN:
            bad.add(name)
    assert not bad, f"{path.name} imports {sorted(bad)}"
