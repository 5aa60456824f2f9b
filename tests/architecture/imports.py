"""The package's import graph, read from source: which module imports which (anywhere in the
file: lazy and type-checking imports are dependencies too)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "chatgate"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def imported(path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """(chatgate module, line) for every import in ``path``; ``from pkg import sub`` names the
    submodule when there is one."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "chatgate":
                    yield _known(alias.name, known), node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "chatgate":
                continue
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                yield (sub if sub in known else _known(node.module, known)), node.lineno


def _known(name: str, known: dict[str, Path]) -> str:
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {
        name: {dep for dep, _ in imported(path, known) if dep != name}
        for name, path in known.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for dep in edges.get(node, ()):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
