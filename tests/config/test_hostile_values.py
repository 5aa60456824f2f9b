"""Values a config check must refuse with exit 78 and a key path and line, never a traceback or
a hang: infinite floats, lone surrogates, huge integers, secret files that are not files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.config.support import load_error

WEBCHAT = "config_version: 1\nchannels:\n  webchat: {{auth: open, {field}}}\n"


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1e999"])
def test_a_float_setting_must_be_finite(tmp_path: Path, value: str) -> None:
    error = load_error(tmp_path, WEBCHAT.format(field=f"session_max_age_s: {value}"))
    assert error.exit_code == 78
    [issue] = error.issues
    assert issue.path[-1] == "session_max_age_s" and issue.line == 3, error.render()


@pytest.mark.parametrize(
    ("text", "path", "fragment"),
    [
        pytest.param(
            'gateway:\n  name: "a\\ud800b"\n', ("gateway", "name"), "surrogate", id="surrogate"
        ),
        pytest.param('gateway:\n  "\\udcff": 1\n', ("gateway",), "surrogate", id="surrogate-key"),
        pytest.param(
            "gateway:\n  name: 0x" + "f" * 5000 + "\n", ("gateway", "name"), "too large", id="hex"
        ),
        pytest.param(
            "gateway:\n  name: " + "9" * 5000 + "\n",
            ("gateway", "name"),
            "not a valid int",
            id="digits",
        ),
        pytest.param(
            "config_version: 0x" + "f" * 5000 + "\n", ("config_version",), "too large", id="version"
        ),
    ],
)
def test_hostile_scalars_name_their_key(
    tmp_path: Path, text: str, path: tuple[str, ...], fragment: str
) -> None:
    error = load_error(tmp_path, text)
    assert error.exit_code == 78
    rendered = error.render()
    assert fragment in rendered
    last_line = text.count("\n")  # the hostile value is always on the file's last line
    assert any(issue.path == path and issue.line == last_line for issue in error.issues), rendered
    rendered.encode("utf-8")  # printable: no surrogate reaches the terminal


def test_a_secret_file_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "token.fifo"
    os.mkfifo(fifo)
    error = load_error(tmp_path, f"config_version: 1\ngateway:\n  api_token_file: {fifo}\n")
    assert error.exit_code == 78
    assert "not a regular file" in error.render() and "api_token_file" in error.render()
