"""deploy/slim_image.py and the Dockerfile's pruning, the image's build-stage step: Babel data kept
for every language chatgate has texts in (and their regional forms), every part it compiles whole
exists, and the Windows libraries it drops are loaded on Windows only."""

from __future__ import annotations

import inspect
import sysconfig
from pathlib import Path

import babel
import discord.opus

from chatgate.texts.catalog import LANGUAGES, negotiate
from deploy.slim_image import COMPILED_WHOLE, keep_languages


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
