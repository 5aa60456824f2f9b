"""The manual's pages: README.md and every page under docs/, for tests that check what it says."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """README.md first, then docs/**/*.md in a stable order."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def manual_text() -> str:
    """Every page, one after the other (a statement may move between pages)."""
    return "\n".join(p.read_text(encoding="utf-8") for p in pages())
