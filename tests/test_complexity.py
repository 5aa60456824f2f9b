"""No function in chatgate/ is more complex than 15 (radon's cyclomatic complexity): past that
a function is a list of steps waiting to be named, or a table waiting to be written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from radon.complexity import cc_visit
from radon.visitors import Class

ROOT = Path(__file__).resolve().parent.parent / "chatgate"
LIMIT = 15


def _blocks(block: Any, prefix: str = "") -> Iterator[tuple[str, int]]:
    """A function or method (radon lists methods on their own too) and its closures."""
    if isinstance(block, Class):
        return
    owner = f"{block.classname}." if block.is_method and not prefix else prefix
    yield f"{owner}{block.name}", block.complexity
    for closure in block.closures:
        yield from _blocks(closure, f"{owner}{block.name}.")


def too_complex(root: Path = ROOT) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for block in cc_visit(path.read_text(encoding="utf-8")):
            for name, complexity in _blocks(block):
                if complexity > LIMIT:
                    found.append(f"{path.relative_to(root.parent)}:{name} {complexity}")
    return found


def test_no_function_is_above_the_limit() -> None:
    assert too_complex() == []


def test_the_check_sees_methods_and_closures(tmp_path: Path) -> None:
    branches = "\n".join(f"        if x == {n}:\n            return {n}" for n in range(16))
    (tmp_path / "m.py").write_text(
        f"class A:\n    def f(self, x):\n{branches}\n"
        f"def g(x):\n    def inner(x):\n{branches.replace('        ', '        ')}\n    return inner\n"
    )
    assert sorted(line.split(":", 1)[1] for line in too_complex(tmp_path)) == [
        "A.f 17",
        "g.inner 17",
    ]
