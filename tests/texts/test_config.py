"""Text keys in gateway.yaml: overrides and languages load, and a bad id or placeholder
is refused at load (exit 78) naming its key path and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.config.errors import EX_CONFIG
from chatgate.config.loader import LoadedConfig
from chatgate.feature.voices import Voices, catalog_from
from chatgate.model.text_ids import TextId
from tests.config.support import assert_issue, load, load_error


def test_overrides_and_languages_load_into_the_catalog(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        """
        gateway:
          language: de
          texts:
            command.stopped: "Halt."
            notice.rate_limited: {en: "Slow down, wait {wait}.", ru: "Помедленнее, {wait}."}
        agents:
          default:
            backend: echo
            texts:
              command.new_session: "Fresh start!"
        channels:
          telegram:
            token: "123:abc"
            language: fr
            texts:
              command.stopped: {fr: "Arrêt !"}
        """,
    )
    assert catalog_from(loaded).render(TextId.NEW_SESSION, "es", "x", "default") == "Fresh start!"
    catalog = catalog_from(loaded)
    assert catalog.default_language == "de"
    assert catalog.language_for("telegram", None) == "fr"
    assert catalog.render(TextId.STOPPED, "fr", "telegram") == "Arrêt !"
    assert catalog.render(TextId.STOPPED, "en", "telegram") == "Halt."
    assert catalog.render(TextId.RATE_LIMITED, "ru", wait="5 с") == "Помедленнее, 5 с."


@pytest.mark.parametrize(
    ("text", "path", "line", "fragment"),
    [
        (
            """
            gateway:
              texts:
                command.stoped: "Halt."
            """,
            "gateway.texts.command.stoped",
            3,
            "command.stopped",  # the did-you-mean hint
        ),
        (
            """
            gateway:
              texts:
                notice.rate_limited: "Slow down, wait {seconds}."
            """,
            "gateway.texts.notice.rate_limited",
            3,
            "unknown placeholder {seconds}",
        ),
        (
            """
            channels:
              telegram:
                token: "123:abc"
                texts:
                  failure.too_long: {de: "Zu lang."}
            """,
            "channels.telegram.texts.failure.too_long",
            5,
            "missing placeholder {new}",
        ),
        (
            """
            agents:
              default:
                backend: echo
                texts:
                  notice.rate_limited: "Slow down."
            """,
            "agents.default.texts.notice.rate_limited",
            5,
            "missing placeholder {wait}",
        ),
        (
            """
            gateway:
              language: pt
            """,
            "gateway.language",
            2,
            "'pt' is not one of",
        ),
    ],
)
def test_bad_text_keys_exit_78_with_path_and_line(
    tmp_path: Path, text: str, path: str, line: int, fragment: str
) -> None:
    error = load_error(tmp_path, text)
    assert error.exit_code == EX_CONFIG
    assert_issue(error, path, line, fragment)


class _Live:
    def __init__(self, loaded: LoadedConfig) -> None:
        self.loaded = loaded


def test_a_voice_is_made_once_per_config_and_again_after_a_reload(tmp_path: Path) -> None:
    """A turn asks for its Voice several times: the same one comes back until the config is
    reloaded, and the reloaded config's language then."""
    yaml = """
        agents:
          default:
            backend: echo
        channels:
          telegram:
            token: "123:abc"
            language: {lang}
        """
    live = _Live(load(tmp_path, yaml.format(lang="fr")))
    voices = Voices(live)
    first = voices.for_channel("telegram", None, "default")
    assert first.language == "fr"
    assert voices.for_channel("telegram", None, "default") is first
    assert voices.for_channel("telegram", "de", "default").language == "de"
    live.loaded = load(tmp_path, yaml.format(lang="es"))
    assert voices.for_channel("telegram", None, "default").language == "es"
