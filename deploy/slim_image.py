"""Build-stage step of the Dockerfile: what the image ships of the installed packages.

Run as ``PYTHONPATH=<site-packages> python deploy/slim_image.py <site-packages>`` after
``pip install --no-compile``. Two things, both measured in bench/RESULTS.md:

- Bytecode for what the daemon runs, compiled once here (the image cannot write ``.pyc``): every
  module a gateway imports (each chatgate module, litellm and its first completion, the media,
  MCP and Redis libraries loaded on first use) and every provider module of litellm, so starting
  and answering never compiles. Modules nothing of that imports (litellm's proxy server, most
  SDK type modules) ship as source only: about a third of the bytecode, ~90 MB.
- Babel's locale data for the languages chatgate ships texts in: ``negotiate`` answers None for
  any other language, with or without its data, and nothing else formats with Babel (~32 MB).
"""

from __future__ import annotations

import asyncio
import compileall
import importlib
import pkgutil
import sys
from pathlib import Path

# Packages a message or a config loads on first use, and litellm's providers (a route is
# chosen by the config the container mounts): compiled whole.
COMPILED_WHOLE = ("chatgate", "litellm/llms", "PIL", "pypdf", "mcp", "redis")


def import_everything_used() -> None:
    """Import what a running gateway imports, with bytecode writing on."""
    import chatgate

    for module in pkgutil.walk_packages(chatgate.__path__, "chatgate."):
        if not module.name.endswith(".__main__"):  # runs the CLI
            importlib.import_module(module.name)
    from chatgate.agents.litellm_import import import_litellm

    litellm = import_litellm()
    messages = [{"role": "user", "content": "warm"}]
    asyncio.run(litellm.acompletion(model="gpt-4o-mini", messages=messages, mock_response="ok"))


def keep_languages(site: Path, languages: set[str]) -> int:
    """Remove Babel locale files of other languages; returns how many were removed."""
    removed = 0
    for path in (site / "babel" / "locale-data").glob("*.dat"):
        if path.stem != "root" and path.stem.split("_")[0] not in languages:
            path.unlink()
            removed += 1
    return removed


def main(site: Path) -> None:
    sys.dont_write_bytecode = False
    import_everything_used()
    for part in COMPILED_WHOLE:
        if not compileall.compile_dir(site / part, quiet=1, workers=0):
            raise SystemExit(f"compiling {part} failed")
    from chatgate.texts.catalog import LANGUAGES

    removed = keep_languages(site, set(LANGUAGES))
    print(f"slim_image: bytecode compiled; {removed} Babel locale files of other languages removed")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
