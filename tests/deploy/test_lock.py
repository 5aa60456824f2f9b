"""Hash-locked installs: every distribution installed in this environment is in
deploy/constraints-dev.txt at the same version, every pin there carries a sha256, and the
runtime lock (the image's set) is the dev lock's runtime part at the same versions."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
# Installed with the interpreter's venv rather than from the lock.
OURS = {"chatgate", "pip"}


def locked(path: Path) -> dict[str, str]:
    """name → version of each pin; AssertionError for a pin without a hash."""
    text = path.read_text()
    pins: dict[str, str] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        match = PIN.match(block)
        if match is None:
            continue
        assert "--hash=sha256:" in block, f"{path.name}: {match.group(1)} has no hash"
        pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def test_every_installed_distribution_is_locked_at_its_version() -> None:
    pins = locked(ROOT / "deploy" / "constraints-dev.txt")
    unlocked = []
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"] or "")
        if name in OURS:
            continue
        if pins.get(name) != dist.version:
            unlocked.append(f"{name}=={dist.version} (locked: {pins.get(name, 'no')})")
    assert sorted(set(unlocked)) == [], "installed but not in the lock; run `make constraints`"


def test_the_runtime_lock_is_hashed_and_agrees_with_the_dev_lock() -> None:
    runtime = locked(ROOT / "deploy" / "constraints.txt")
    dev = locked(ROOT / "deploy" / "constraints-dev.txt")
    assert {"litellm", "aiohttp", "pydantic"} <= runtime.keys()
    assert {n: v for n, v in runtime.items() if dev.get(n) != v} == {}


def test_a_pin_without_a_hash_fails(tmp_path: Path) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text("aiohttp==3.14.5 \\\n    --hash=sha256:00\nlitellm==1.82.7\n")
    try:
        locked(lock)
    except AssertionError as exc:
        assert "litellm has no hash" in str(exc)
    else:
        raise AssertionError("an unhashed pin passed")
