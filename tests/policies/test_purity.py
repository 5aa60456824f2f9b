"""Policies stay pure: only a small set of side-effect-free stdlib modules may be imported."""

from __future__ import annotations

from pathlib import Path

import pytest

import chatgate.policies
from tests.purity import imports_of

POLICY_DIR = Path(chatgate.policies.__file__).parent
MODULES = sorted(POLICY_DIR.glob("*.py"))
ALLOWED = {
    "__future__",
    "chatgate.secure_compare",  # pure: hmac over bytes
    "chatgate.model.text_ids",  # pure: the catalog's text ids (a StrEnum), which decisions return
    "collections",
    "collections.abc",
    "dataclasses",
    "email.utils",
    "enum",
    "fnmatch",  # pure: glob matching over strings
    "hashlib",  # pure: digests of strings (stable approval ids)
    "hmac",
    "json",
    "math",
    "random",
    "re",
    "typing",
    "unicodedata",  # pure: accent folding of yes/no replies
}


def test_expected_modules_exist() -> None:
    names = {path.stem for path in MODULES}
    assert {
        "admission",
        "pairing",
        "ratelimit",
        "loopguard",
        "final_reply",
        "failure",
        "send_errors",
        "supervision",
        "memory",
        "webhook_filter",
    } <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_module_imports_only_pure_dependencies(path: Path) -> None:
    bad = {
        name
        for name in imports_of(path)
        if name not in ALLOWED and not name.startswith(("chatgate.policies", "chatgate.model"))
    }
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_checker_catches_forbiddenimports_of(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import asyncio\nfrom chatgate.gateway import x\nimport time\n")
    assert imports_of(sample) - ALLOWED == {"asyncio", "chatgate.gateway", "time"}


def test_importing_every_policy_loads_no_third_party_package() -> None:
    """The text ids policies return come without the catalog (and Babel) behind them."""
    import subprocess
    import sys

    names = ", ".join(f"chatgate.policies.{p.stem}" for p in MODULES if p.stem != "__init__")
    code = (
        f"import sys, {names}\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(loaded & {'babel', 'pydantic', 'aiohttp', 'litellm', 'telegram'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
