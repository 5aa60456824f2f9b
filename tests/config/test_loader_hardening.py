"""Hostile or broken config files are a ConfigError (exit 78) naming where, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.config import ConfigError, load_config
from tests.config.support import catalog, load_error, write_config

BOMB_LEVELS = 9


def alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + f"\ngateway: {{name: *a{levels}}}\n"


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        pytest.param("gateway:\n  name: a\x00b\n", "is not allowed in YAML", 2, id="nul"),
        pytest.param("gateway:\n  name: a\x07b\n", "is not allowed in YAML", 2, id="bell"),
        pytest.param("a: &a [*a]\n", "recursive alias", 1, id="recursive-seq"),
        pytest.param("a: &a {b: *a}\n", "recursive alias", 1, id="recursive-map"),
        pytest.param("gateway: {state_dir: 2001-13-45}\n", "not a valid timestamp", 1, id="date"),
        pytest.param("gateway: {name: !!float x}\n", "not a valid float", 1, id="float-tag"),
        pytest.param("x: " + "[" * 70 + "]" * 70 + "\n", "nested deeper than 64", 1, id="deep"),
        pytest.param("x: " + "[" * 2000 + "]" * 2000 + "\n", "nested deeper", 1, id="very-deep"),
        pytest.param(alias_bomb(BOMB_LEVELS), "aliases expand to more than", None, id="bomb"),
    ],
)
def test_hostile_yaml_is_a_config_error(
    tmp_path: Path, text: str, fragment: str, line: int | None
) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path, env={}, catalog=catalog())
    error = info.value
    assert error.exit_code == 78
    assert fragment in error.render()
    if line is not None:
        assert any(issue.line == line for issue in error.issues), error.render()


def test_secret_file_that_is_not_utf8_or_has_nul_in_its_path(tmp_path: Path) -> None:
    (tmp_path / "bad.bin").write_bytes(b"\xff\xfe\x00token")
    error = load_error(
        tmp_path,
        """
        gateway: {api_token_file: bad.bin}
        agents:
          default: {backend: echo}
        """,
    )
    assert "is not UTF-8 text" in error.render()
    error = load_error(tmp_path, 'gateway: {api_token_file: "a\\0b"}\n')
    assert "NUL" in error.render()


def test_config_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_bytes(b"gateway: {name: \xff}\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path, env={}, catalog=catalog())


CANARY_KEY = "sk-CANARY-model-key-0123456789"


@pytest.mark.parametrize(
    "text",
    [
        'gateway:\n  http: {port: "${OPENAI_API_KEY}"}\n',
        'gateway:\n  log: {level: "${OPENAI_API_KEY}"}\n',
        'agents:\n  default: {backend: "${OPENAI_API_KEY}"}\n',
        "agents:\n  default: {backend: echo}\n  x: {backend: litellm, model: m, api_key: "
        + CANARY_KEY
        + "}\ngateway:\n  http: {port: "
        + CANARY_KEY
        + "}\n",
    ],
)
def test_config_errors_never_echo_a_secret(tmp_path: Path, text: str) -> None:
    write_config(tmp_path, text)
    error = load_error(tmp_path, text, env={"OPENAI_API_KEY": CANARY_KEY})
    assert CANARY_KEY not in error.render()
    assert CANARY_KEY not in str(error)


def test_secret_from_a_file_is_never_echoed(tmp_path: Path) -> None:
    (tmp_path / "key.txt").write_text(CANARY_KEY, encoding="utf-8")
    error = load_error(tmp_path, "gateway:\n  http: {port_file: key.txt}\n")
    assert CANARY_KEY not in error.render()
