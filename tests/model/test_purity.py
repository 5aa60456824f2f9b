"""The ground floor stands on nothing: `chatgate.model` imports only the standard library and
itself, and loading it loads no third-party package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import chatgate.model
from tests.purity import imports_of

MODEL_DIR = Path(chatgate.model.__file__).parent
MODULES = sorted(MODEL_DIR.glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_imports_only_the_standard_library_and_itself(path: Path) -> None:
    bad = {
        name
        for name in imports_of(path)
        if not name.startswith("chatgate.model")
        and name != "__future__"
        and name.split(".")[0] not in sys.stdlib_module_names
    }
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_loading_the_model_loads_nothing_else_of_chatgate_or_any_sdk() -> None:
    names = ", ".join(f"chatgate.model.{p.stem}" for p in MODULES if p.stem != "__init__")
    code = (
        f"import sys, {names}\n"
        "mods = set(sys.modules)\n"
        "print(sorted(m for m in mods if m.startswith('chatgate.') and not m.startswith("
        "'chatgate.model')))\n"
        "print(sorted({m.split('.')[0] for m in mods} & {'pydantic', 'aiohttp', 'redis', 'babel'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "[]"], out.stdout
