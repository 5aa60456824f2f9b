"""Build-stage step of the Dockerfile: what the image ships of the installed packages.

Run as ``PYTHONPATH=<site-packages> python deploy/slim_image.py <site-packages> [<shipped-at>]``
after ``pip install --no-compile``; ``shipped-at`` is where the final stage puts that directory
(what tracebacks name). Three things, all measured in bench/RESULTS.md:

- Bytecode for what the daemon runs, compiled once here (the image cannot write ``.pyc``): every
  module a gateway imports (each chatgate module, litellm and its first completion, the media,
  MCP and Redis libraries loaded on first use) and every provider module of litellm, so starting
  and answering never compiles. Modules nothing of that imports (litellm's proxy server, most
  SDK type modules) ship as source only: about a third of the bytecode, ~90 MB.
- Babel's locale data for the languages chatgate ships texts in: ``negotiate`` answers None for
  any other language, with or without its data, and nothing else formats with Babel (~32 MB).
- Sourceless third-party modules: a compiled module's bytecode moves beside where its ``.py``
  was (the layout a sourceless import finds) and the ``.py`` goes (~38 MB). Tracebacks through
  those frames keep file and line but show no source line. chatgate keeps its source (operators
  read its lines in tracebacks), and so does every package in ``KEEP_SOURCE``.
"""

from __future__ import annotations

import asyncio
import compileall
import importlib
import pkgutil
import py_compile
import sys
from collections.abc import Collection
from pathlib import Path

# Packages a message or a config loads on first use, and litellm's providers (a route is
# chosen by the config the container mounts): compiled whole.
COMPILED_WHOLE = ("chatgate", "litellm/llms", "PIL", "pypdf", "mcp", "redis")

# Top-level packages whose compiled modules keep their ``.py``: without it they break or hide what
# operators need. The audit (a grep of the installed set for getsource/getsourcelines/
# getsourcefile/findsource, linecache reads, inspect.getfile, ``__file__`` or get_data reading a
# ``.py``; and an ``open`` audit hook over the import walk, a completion and a daemon answering
# a webhook, logging every read of a compiled module's source) found one reader, anyio. Checked
# and not kept: pydantic reads source only for ``use_attribute_docstrings`` models, which nothing
# installed nor chatgate declares, and then the model's own module (chatgate's keeps its source);
# attrs only writes its generated methods into linecache; jinja2, mautrix and dateutil read
# templates, JSON and tz data, not modules.
KEEP_SOURCE: dict[str, str] = {
    "chatgate": "ours: operators' tracebacks show its source lines",
    "anyio": "anyio._lazyimport builds each package's exports from inspect.getsource of its "
    "__init__; without source anyio has no public names",
}


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


def top_level(site: Path, source: Path) -> str:
    """The top-level import name a module belongs to: its package's, or its own."""
    parts = source.relative_to(site).parts
    return parts[0] if len(parts) > 1 else source.stem


def drop_sources(site: Path, shipped: Path, keep: Collection[str]) -> int:
    """Make every compiled module outside ``keep`` sourceless; returns how many.

    Recompiled beside the source (``name.pyc``, what compileall's legacy layout writes) with
    ``shipped`` as its file name, so tracebacks name the path the image has; unchecked-hash
    bytecode, as nothing is left to check it against, carries no build time (same bytes on
    every build)."""
    tag = sys.implementation.cache_tag
    done = 0
    for cached in sorted(site.rglob(f"__pycache__/*.{tag}.pyc")):
        source = cached.parents[1] / (cached.name.removesuffix(f".{tag}.pyc") + ".py")
        if not source.is_file() or top_level(site, source) in keep:
            continue
        shown = shipped / source.relative_to(site)
        py_compile.compile(
            str(source),
            cfile=str(source.with_suffix(".pyc")),
            dfile=str(shown),
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
        cached.unlink()
        source.unlink()
        done += 1
    for cache in list(site.rglob("__pycache__")):
        if not any(cache.iterdir()):
            cache.rmdir()
    return done


def main(site: Path, shipped: Path) -> None:
    sys.dont_write_bytecode = False
    import_everything_used()
    for part in COMPILED_WHOLE:
        if not compileall.compile_dir(site / part, quiet=1, workers=0):
            raise SystemExit(f"compiling {part} failed")
    from chatgate.texts.catalog import LANGUAGES

    removed = keep_languages(site, set(LANGUAGES))
    sourceless = drop_sources(site, shipped, KEEP_SOURCE)
    print(
        f"slim_image: bytecode compiled; {removed} Babel locale files of other languages removed;"
        f" {sourceless} third-party modules shipped as bytecode only"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]))
