"""What a module imports, read from its source (the purity tests of policies/ and presentation/)."""

from __future__ import annotations

import ast
from pathlib import Path


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports; relative imports keep their leading dots."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found
