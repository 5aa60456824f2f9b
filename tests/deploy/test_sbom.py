"""The SBOM: `make sbom` runs cyclonedx-bom over the image's environment and the image carries
the result; the tool itself produces a CycloneDX document naming the locked versions."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_the_image_carries_the_sbom_make_sbom_writes() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "COPY build/sbom.cdx.json /usr/share/doc/chatgate/sbom.cdx.json" in dockerfile
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\nsbom:") :].split("\n\n")[0]
    assert "--require-hashes --no-deps -r deploy/constraints.txt" in recipe
    assert "cyclonedx-py environment" in recipe and "-o build/sbom.cdx.json" in recipe


def small_environment(root: Path, *names: str) -> Path:
    """A venv holding only the installed metadata of `names`: what `cyclonedx-py environment`
    reads, without walking the 200 distributions of the dev venv (about 17 CPU s)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    (site,) = root.glob("lib/python*/site-packages")
    for name in names:
        dist = importlib.metadata.distribution(name)
        (metadata,) = [f for f in dist.files or () if f.name == "METADATA"]
        info = Path(str(dist.locate_file(metadata))).parent
        shutil.copytree(info, site / info.name)
    return root / "bin" / "python"


def test_cyclonedx_describes_an_environment(tmp_path: Path) -> None:
    out = tmp_path / "sbom.cdx.json"
    python = small_environment(tmp_path / "env", "litellm", "aiohttp")
    command = [str(BIN / "cyclonedx-py"), "environment", "--of", "JSON", "-o", str(out)]
    subprocess.run([*command, str(python)], check=True, capture_output=True, timeout=120)
    document = json.loads(out.read_text())
    assert document["bomFormat"] == "CycloneDX"
    versions = {c["name"]: c.get("version") for c in document["components"]}
    lock = (ROOT / "deploy" / "constraints.txt").read_text()
    assert f"litellm=={versions['litellm']}" in lock
