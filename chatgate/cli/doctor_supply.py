"""`doctor` supply-chain checks: `.pth` files that run code at every Python start, and installed
versions known to be poisoned.

A `.pth` line that starts with ``import`` is executed by every interpreter start (the litellm
1.82.7/1.82.8 credential stealer came as one). Lines that only add a path run nothing. A file
with executed lines must be on the known-good list (its name and the sha256 of its content), or
be setuptools' editable-install hook for a distribution installed here; anything else fails.
"""

from __future__ import annotations

import hashlib
import re
import site
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from chatgate.config.findings import Finding, Level

PTH_CHECK = "supply.pth"
KNOWN_BAD_CHECK = "supply.known_bad"

# name → sha256 of the content of `.pth` files known to be harmless.
KNOWN_GOOD_PTH: Mapping[str, frozenset[str]] = {
    "distutils-precedence.pth": frozenset(  # setuptools' distutils shim (the locked release)
        {"2638ce9e2500e572a5e0de7faed6661eb569d1b696fcba07b0dd223da5f5d224"}
    ),
}
# distribution (canonical name) → version → why it must not be installed.
KNOWN_BAD: Mapping[str, Mapping[str, str]] = {
    "litellm": {
        "1.82.7": "carried a credential stealer run from a .pth file (BerriAI/litellm#24512)",
        "1.82.8": "carried a credential stealer run from a .pth file (BerriAI/litellm#24512)",
    },
}
_EDITABLE = re.compile(r"__editable__\.(?P<dist>[A-Za-z0-9_.]+)-(?P<version>[^-]+)\.pth")
SHOWN_CHARS = 160


@dataclass(frozen=True)
class PthFile:
    path: Path
    executed: tuple[str, ...]  # the lines Python runs at start
    digest: str


def site_dirs() -> list[Path]:
    """The running interpreter's site-packages directories (where `.pth` files are read)."""
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    return [Path(d) for d in dict.fromkeys(dirs) if Path(d).is_dir()]


def read_pth(path: Path) -> PthFile:
    data = path.read_bytes()
    lines = data.decode("utf-8", errors="replace").splitlines()
    executed = tuple(line.strip() for line in lines if line.startswith(("import ", "import\t")))
    return PthFile(path, executed, hashlib.sha256(data).hexdigest())


def trusted(pth: PthFile, installed: Mapping[str, str]) -> bool:
    """Runs nothing, is on the known-good list, or is the editable hook of an installed dist."""
    if not pth.executed or pth.digest in KNOWN_GOOD_PTH.get(pth.path.name, frozenset()):
        return True
    match = _EDITABLE.fullmatch(pth.path.name)
    if match is None:
        return False
    dist, version = _canonical(match["dist"]), match["version"]
    finder = f"__editable___{match['dist']}_{version.replace('.', '_')}_finder"
    hook = (f"import {finder}; {finder}.install()",)
    return installed.get(dist) == version and pth.executed == hook


def check_pth(dirs: Iterable[Path], installed: Mapping[str, str]) -> Finding:
    unknown = []
    for directory in dirs:
        for path in sorted(directory.glob("*.pth")):
            pth = read_pth(path)
            if not trusted(pth, installed):
                unknown.append(pth)
    if not unknown:
        return Finding(PTH_CHECK, Level.OK, "no unknown .pth file runs code at Python start")
    shown = "; ".join(
        f"{p.path} runs {' | '.join(line[:SHOWN_CHARS] for line in p.executed)}" for p in unknown
    )
    return Finding(
        PTH_CHECK,
        Level.FAIL,
        f"{len(unknown)} unknown .pth file(s) run code at every Python start: {shown}",
        "remove the file and the package that installed it, rotate every credential this "
        "environment could read, and reinstall from the hash-locked deploy/constraints.txt",
    )


def check_known_bad(installed: Mapping[str, str]) -> Finding:
    bad = [
        f"{name} {version}: {why}"
        for name, versions in KNOWN_BAD.items()
        if (version := installed.get(name)) is not None and (why := versions.get(version))
    ]
    if not bad:
        return Finding(KNOWN_BAD_CHECK, Level.OK, "no installed version is on the known-bad list")
    return Finding(
        KNOWN_BAD_CHECK,
        Level.FAIL,
        "known-bad versions installed: " + "; ".join(bad),
        "uninstall them, rotate every credential this environment could read, and reinstall "
        "from the hash-locked deploy/constraints.txt",
    )


def installed_versions(path: Sequence[str] | None = None) -> dict[str, str]:
    """canonical name → version of each distribution on ``path`` (sys.path), first one wins."""
    found: dict[str, str] = {}
    for dist in metadata.distributions(path=list(path if path is not None else sys.path)):
        name = _canonical(dist.metadata["Name"] or "")
        found.setdefault(name, dist.version)
    return found


def check_supply_chain(dirs: Iterable[Path] | None = None) -> list[Finding]:
    """Blocking (reads files): run in a thread."""
    installed = installed_versions()
    return [check_pth(site_dirs() if dirs is None else dirs, installed), check_known_bad(installed)]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
