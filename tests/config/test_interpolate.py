"""`${VAR}` interpolation per scalar after parsing, and `*_file` secret indirection."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.config.base import secret_value
from tests.config.support import (
    STRONG_TOKEN,
    assert_issue,
    catalog,
    load,
    load_error,
    write_config,
)


def _reply_text(tmp_path: Path, value: str, env: dict[str, str]) -> str | None:
    """Interpolate ``value`` in a plain string field and return the result."""
    loaded = load(tmp_path, f"gateway:\n  empty_reply_text: '{value}'\n", env)
    return loaded.config.gateway.empty_reply_text


@pytest.mark.parametrize(
    ("value", "env", "expected"),
    [
        ("${NAME}", {"NAME": "ann"}, "ann"),
        ("x-${NAME}-y", {}, "x--y"),
        ("${NAME:-dflt}", {}, "dflt"),
        ("${NAME:-dflt}", {"NAME": ""}, "dflt"),
        ("${NAME:-dflt}", {"NAME": "set"}, "set"),
        ("${NAME-dflt}", {}, "dflt"),
        ("${NAME-dflt}", {"NAME": ""}, ""),
        ("${NAME-dflt}", {"NAME": "set"}, "set"),
        ("${NAME:-http://h:1/p}", {}, "http://h:1/p"),
        ("${NAME:?needed}", {"NAME": "ok"}, "ok"),
        ("$${NAME}", {"NAME": "ann"}, "${NAME}"),
        ("$${NAME:-x} and ${NAME}", {"NAME": "ann"}, "${NAME:-x} and ann"),
        ("${A}${B}", {"A": "1", "B": "2"}, "12"),
        ("costs $5", {}, "costs $5"),
    ],
)
def test_interpolation_forms(
    tmp_path: Path, value: str, env: dict[str, str], expected: str
) -> None:
    assert _reply_text(tmp_path, value, env) == expected


@pytest.mark.parametrize(
    "env_value",
    [
        "[a, b]",
        "{key: value}",
        "key: value # not a comment",
        "- item\n- item2",
        "*alias &anchor !!python/object:os.system",
        "${OTHER}",
    ],
)
def test_env_values_are_not_reparsed(tmp_path: Path, env_value: str) -> None:
    env = {"VALUE": env_value, "OTHER": "must-not-expand"}
    assert _reply_text(tmp_path, "${VALUE}", env) == env_value


def test_list_stays_a_list(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        """
        gateway:
          silence_markers: ["${MARK}", "${UNSET}", plain]
        channels:
          telegram:
            token: t
            allowed_users: ["${ADMIN}", 42]
        """,
        {"MARK": "a, b", "ADMIN": "1,2"},
    )
    assert loaded.config.gateway.silence_markers == ["a, b", "", "plain"]
    assert loaded.channel("telegram") is not None
    assert loaded.channels["telegram"].config.allowed_users == ["1,2", "42"]


def test_scalar_with_list_syntax_from_env_stays_a_string(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        gateway:
          silence_markers: ${MARKERS}
        """,
        {"MARKERS": "[a, b]"},
    )
    assert_issue(error, "gateway.silence_markers", 2, "valid list, got a string")


def test_numbers_and_booleans_coerce_from_env(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        """
        gateway:
          http: {port: "${PORT:-8765}"}
        channels:
          telegram: {token: t, enabled: "${TG_ON:-false}"}
        """,
        {"PORT": "9001"},
    )
    assert loaded.config.gateway.http.port == 9001
    assert loaded.channel("telegram") is not None
    assert loaded.channels["telegram"].config.enabled is False


def test_env_defaults_to_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chatgate.config import load_config

    monkeypatch.setenv("CG_TEST_REPLY", "from-os-environ")
    path = write_config(tmp_path, "gateway: {empty_reply_text: '${CG_TEST_REPLY}'}\n")
    assert load_config(path, catalog=catalog()).config.gateway.empty_reply_text == "from-os-environ"
    assert load_config(path, env={}, catalog=catalog()).config.gateway.empty_reply_text == ""


@pytest.mark.parametrize(
    ("value", "env", "fragment"),
    [
        ("${TOKEN:?set it}", {}, "environment variable TOKEN set it"),
        ("${TOKEN:?set it}", {"TOKEN": ""}, "environment variable TOKEN set it"),
        ("${TOKEN:?}", {}, "environment variable TOKEN must be set"),
    ],
)
def test_required_var_names_path_and_line(
    tmp_path: Path, value: str, env: dict[str, str], fragment: str
) -> None:
    error = load_error(
        tmp_path,
        f"""
        agents:
          default: {{backend: echo}}
        channels:
          telegram:
            dm_policy: open
            token: "{value}"
        """,
        env,
    )
    assert_issue(error, "channels.telegram.token", 6, fragment)


def test_every_required_var_is_reported(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        gateway:
          api_token: ${API:?}
        agents:
          default: {backend: litellm, model: "${MODEL:?}"}
        """,
    )
    assert len(error.issues) == 2
    assert_issue(error, "gateway.api_token", 2, "API")
    assert_issue(error, "agents.default.model", 4, "MODEL")


# --- *_file secret indirection -------------------------------------------------------------


def test_secret_files_are_relative_to_the_config_and_stripped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf_dir = tmp_path / "etc"
    (conf_dir / "secrets").mkdir(parents=True)
    (conf_dir / "secrets" / "tg").write_text("  123:tg-from-file\n\n", encoding="utf-8")
    (conf_dir / "secrets" / "api").write_text("sk-file-key\r\n", encoding="utf-8")
    (conf_dir / "secrets" / "token").write_text(f"{STRONG_TOKEN}\n", encoding="utf-8")
    absolute = tmp_path / "hook.secret"
    absolute.write_text("\thook-from-file \n", encoding="utf-8")
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)  # relative to the config file, not to the working directory
    loaded = load(
        conf_dir,
        f"""
        gateway:
          api_token_file: secrets/token
        agents:
          default: {{backend: litellm, model: m, api_key_file: secrets/api}}
        channels:
          telegram: {{token_file: secrets/tg}}
          webhook:
            routes:
              a: {{path: /hooks/a, secret_file: "{absolute}"}}
        """,
    )
    cfg = loaded.config
    assert loaded.channel("telegram") is not None
    assert secret_value(loaded.channels["telegram"].config.token) == "123:tg-from-file"
    assert secret_value(cfg.gateway.api_token) == STRONG_TOKEN
    assert secret_value(cfg.agents["default"].api_key) == "sk-file-key"  # type: ignore[union-attr]
    assert loaded.channel("webhook") is not None
    assert secret_value(loaded.channels["webhook"].config.routes["a"].secret) == "hook-from-file"
    assert {"123:tg-from-file", "sk-file-key", "hook-from-file"} <= loaded.secrets


def test_secret_file_path_from_env(tmp_path: Path) -> None:
    (tmp_path / "tg").write_text("tok-via-env-path", encoding="utf-8")
    text = "channels:\n  telegram: {token_file: '${TG_FILE}'}\n"
    loaded = load(tmp_path, text, {"TG_FILE": "tg"})
    assert loaded.channel("telegram") is not None
    assert secret_value(loaded.channels["telegram"].config.token) == "tok-via-env-path"
    unset = load(tmp_path, text, {})  # an unset path means "not configured"
    assert unset.channel("telegram") is not None
    assert unset.channels["telegram"].config.token is None


def test_file_wins_over_an_empty_inline_value(tmp_path: Path) -> None:
    (tmp_path / "tg").write_text("tok-from-file", encoding="utf-8")
    loaded = load(
        tmp_path,
        "channels:\n  telegram: {token: '${TG_TOKEN}', token_file: tg}\n",
    )
    assert loaded.channel("telegram") is not None
    assert secret_value(loaded.channels["telegram"].config.token) == "tok-from-file"


@pytest.mark.parametrize(
    ("text", "path", "line", "fragment"),
    [
        pytest.param(
            """
            channels:
              telegram:
                token: inline
                token_file: tg
            """,
            "channels.telegram.token_file",
            4,
            "set either token or token_file, not both",
            id="both",
        ),
        pytest.param(
            """
            channels:
              telegram:
                dm_policy: open
                token_file: missing/tg
            """,
            "channels.telegram.token_file",
            4,
            "cannot read",
            id="missing-file",
        ),
        pytest.param(
            """
            agents:
              default:
                backend: litellm
                model: m
                api_key_file: .
            """,
            "agents.default.api_key_file",
            5,
            "cannot read",
            id="directory",
        ),
        pytest.param(
            """
            channels:
              webhook:
                routes:
                  a: {path: /hooks/a, secret_file: [x]}
            """,
            "channels.webhook.routes.a.secret_file",
            4,
            "expected a file path",
            id="not-a-path",
        ),
    ],
)
def test_secret_file_errors(tmp_path: Path, text: str, path: str, line: int, fragment: str) -> None:
    (tmp_path / "tg").write_text("tok", encoding="utf-8")
    assert_issue(load_error(tmp_path, text), path, line, fragment)
