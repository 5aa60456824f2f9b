"""deploy/slim_image.py and the Dockerfile's pruning, the image's build-stage step: Babel data kept
for every language chatgate has texts in (and their regional forms), every part it compiles whole
exists, the Windows libraries it drops are loaded on Windows only, and compiled third-party
modules ship as bytecode alone while chatgate and the packages reading their own source keep it."""

from __future__ import annotations

import compileall
import inspect
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import babel
import discord.opus

from chatgate.texts.catalog import LANGUAGES, negotiate
from deploy.slim_image import COMPILED_WHOLE, KEEP_SOURCE, drop_sources, keep_languages

ROOT = Path(__file__).parents[2]
SHIPPED = "/usr/local/lib/python3.11/site-packages"
# A package building its exports from its own source at import, as anyio's lazy importer does.
READS_ITS_SOURCE = """import inspect, sys
EXPORTS = [line[4 : line.index("(")] for line in inspect.getsource(sys.modules[__name__]).splitlines()
           if line.startswith("def ")]
def create_task_group(): pass
"""


def test_only_other_languages_lose_their_locale_data(tmp_path: Path) -> None:
    data = tmp_path / "babel" / "locale-data"
    data.mkdir(parents=True)
    names = ["root", "en", "en_GB", "en_150", "de_AT", "ru", "pt", "pt_BR", "gsw", "es_419"]
    for name in names:
        (data / f"{name}.dat").write_bytes(b"")
    assert keep_languages(tmp_path, {"en", "de", "es", "ru"}) == 3
    kept = sorted(p.stem for p in data.glob("*.dat"))
    assert kept == ["de_AT", "en", "en_150", "en_GB", "es_419", "root", "ru"]


def test_every_shipped_language_and_its_regions_still_negotiate() -> None:
    """What the image keeps: the data of each language in LANGUAGES exists here too."""
    data = Path(babel.__file__).parent / "locale-data"
    for language in LANGUAGES:
        assert (data / f"{language}.dat").exists()
        assert negotiate(language) == language
    assert negotiate("de-AT") == "de" and negotiate("pt_BR") is None


def test_the_parts_compiled_whole_are_installed() -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    for part in COMPILED_WHOLE:
        assert (site / part).is_dir() or (Path(__file__).parents[2] / part).is_dir(), part


def test_the_windows_libraries_the_image_drops_are_loaded_on_windows_only() -> None:
    """The only DLLs installed are discord.py's opus builds, which it loads on win32 alone."""
    dockerfile = (Path(__file__).parents[2] / "Dockerfile").read_text()
    assert "-name '*.dll'" in dockerfile
    site = Path(discord.__file__).parents[1]
    dlls = sorted(p.relative_to(site).parent.as_posix() for p in site.rglob("*.dll"))
    assert dlls and set(dlls) == {"discord/bin"}
    loader = inspect.getsource(discord.opus._load_default)
    assert "sys.platform == 'win32'" in loader and ".dll" in loader


def synthetic_site(site: Path) -> None:
    """A third-party package and a single-file module, an anyio and a chatgate that keep their
    source, and a module nothing imported (no bytecode): compiled as the build stage compiles."""
    files = {
        "thirdparty/__init__.py": "from .mod import answer\n",
        "thirdparty/mod.py": "def answer():\n    return 42\n\n\ndef fail():\n    raise ValueError\n",
        "single.py": "VALUE = 'single'\n",
        "anyio/__init__.py": READS_ITS_SOURCE,
        "chatgate/__init__.py": "",
        "chatgate/core.py": "def run():\n    return 'ran'\n",
        "uncompiled/__init__.py": "",
    }
    for name, text in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    for name in ("thirdparty", "anyio", "chatgate"):
        assert compileall.compile_dir(site / name, quiet=1)
    assert compileall.compile_file(site / "single.py", quiet=1)


def run_from(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a Python that sees only the standard library and ``site``, writing no
    bytecode (the image's PYTHONDONTWRITEBYTECODE)."""
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=site,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_compiled_third_party_modules_ship_as_bytecode_alone(tmp_path: Path) -> None:
    synthetic_site(tmp_path)
    assert drop_sources(tmp_path, Path(SHIPPED), KEEP_SOURCE) == 3
    for name in ("thirdparty/__init__", "thirdparty/mod", "single"):
        assert (tmp_path / f"{name}.pyc").is_file() and not (tmp_path / f"{name}.py").exists()
    assert not (tmp_path / "thirdparty" / "__pycache__").exists()
    assert (tmp_path / "uncompiled" / "__init__.py").is_file()  # nothing compiled it
    # hash-based, unchecked: no source mtime in the header, the same bytes on every build
    assert (tmp_path / "single.pyc").read_bytes()[4:8] == (0b01).to_bytes(4, "little")
    done = run_from(tmp_path, "import thirdparty, single; print(thirdparty.answer(), single.VALUE)")
    assert done.returncode == 0 and done.stdout.split() == ["42", "single"], done.stderr
    assert not (tmp_path / "thirdparty" / "__pycache__").exists()
    # a traceback names where the image has the module, with its line and no source
    failed = run_from(tmp_path, "import thirdparty.mod; thirdparty.mod.fail()")
    assert f'File "{SHIPPED}/thirdparty/mod.py", line 6, in fail\n' in failed.stderr
    assert "raise ValueError" not in failed.stderr


def test_chatgate_and_the_packages_reading_their_source_keep_it(tmp_path: Path) -> None:
    synthetic_site(tmp_path)
    drop_sources(tmp_path, Path(SHIPPED), KEEP_SOURCE)
    tag = sys.implementation.cache_tag
    for name in ("anyio/__init__", "chatgate/__init__", "chatgate/core"):
        source = tmp_path / f"{name}.py"
        assert source.is_file() and not source.with_suffix(".pyc").exists()
        assert (source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc").is_file()
    done = run_from(
        tmp_path, "import anyio, chatgate.core; print(anyio.EXPORTS, chatgate.core.run())"
    )
    assert done.returncode == 0 and done.stdout.strip() == "['create_task_group'] ran", done.stderr


def test_the_packages_kept_as_source_still_need_it() -> None:
    """The audit behind KEEP_SOURCE, for the pinned versions: anyio builds its exports from its
    own source; pydantic would read a model's source only for ``use_attribute_docstrings``,
    which no chatgate model sets (so pydantic ships as bytecode)."""
    import anyio._lazyimport

    assert "inspect.getsource(module)" in inspect.getsource(anyio._lazyimport._build_lazy_map)
    assert set(KEEP_SOURCE) == {"chatgate", "anyio"}
    used = [
        p for p in (ROOT / "chatgate").rglob("*.py") if "use_attribute_docstrings" in p.read_text()
    ]
    assert used == []
