"""The text log format: UTF-8 field values read as written, and no value breaks the line."""

from __future__ import annotations

import logging

import pytest

from chatgate.gateway.logs import TextFormatter


def line(**extra: object) -> str:
    record = logging.LogRecord("chatgate.test", logging.WARNING, "", 0, "said", (), None)
    record.__dict__.update(extra)
    return TextFormatter().format(record)


@pytest.mark.parametrize(
    ("value", "shown"),
    [("Settings → Bot → Reset token", '"Settings → Bot → Reset token"'),
     ("Größe→ok", "Größe→ok"), ("telegram", "telegram"), ("", '""'),
     ("two\nlines", '"two\\nlines"'), ("tab\there", '"tab\\there"'),
     ("csi\x9b31m", '"csi\\u009b31m"'), ("sep\u2028x", '"sep\\u2028x"'), ("del\x7f", '"del\\u007f"')],
)  # fmt: skip
def test_a_field_is_shown_as_written_on_one_line(value: str, shown: str) -> None:
    text = line(hint=value)
    assert text.endswith(f" hint={shown}")
    assert "\n" not in text
