"""Masking and restoring secrets in the file's text (every other byte unchanged), the change
summary (keys, never values) and which values count as secrets written in clear."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatgate.config.errors import ConfigError
from chatgate.config.masking import REDACTED
from chatgate.config_edit import document
from chatgate.config_edit.secrets import clear_paths, is_clear

FILE = """
# top comment
gateway:
  redis:
    url: "redis://:pw-one-two-three@127.0.0.1:6379/0"   # the shared store
  api_token: ${CHATGATE_API_TOKEN}

agents:
  default:
    api_key: sk-abcdefghijklmnop
    headers: {X-Key: 'hdr-secret-value'}
    fallbacks:
      - openai/gpt-4o-mini
"""
PATHS = [("gateway", "redis", "url"), ("agents", "default", "api_key"),
         ("agents", "default", "headers", "X-Key")]  # fmt: skip


def no_hide(text: str) -> str:
    return text


def test_masking_swaps_only_the_secret_tokens() -> None:
    masked = document.mask(FILE, PATHS)
    assert "pw-one-two-three" not in masked and "sk-abcdef" not in masked
    assert "hdr-secret-value" not in masked
    expected = (
        FILE.replace('"redis://:pw-one-two-three@127.0.0.1:6379/0"', f"'{REDACTED}'")
        .replace("sk-abcdefghijklmnop", f"'{REDACTED}'")
        .replace("'hdr-secret-value'", f"'{REDACTED}'")
    )
    assert masked == expected  # comments, blank lines, flow style and order as they were


def test_unmasking_puts_back_the_files_own_tokens() -> None:
    masked = document.mask(FILE, PATHS)
    edited = masked.replace("- openai/gpt-4o-mini", "- openai/gpt-4o")
    restored = document.unmask(edited, FILE, "gateway.yaml", no_hide)
    assert restored == FILE.replace("- openai/gpt-4o-mini", "- openai/gpt-4o")


def test_a_mask_where_the_file_has_no_secret_is_an_error_with_its_line() -> None:
    edited = document.mask(FILE, PATHS).replace("${CHATGATE_API_TOKEN}", f"'{REDACTED}'")
    with pytest.raises(ConfigError) as caught:
        document.unmask(edited, FILE, "gateway.yaml", no_hide)
    [issue] = caught.value.issues
    assert issue.path == ("gateway", "api_token") and issue.line == 6


def test_a_partly_masked_value_comes_back_when_it_masks_the_files_value() -> None:
    disk = "agents:\n  a:\n    system_prompt: 'say pw-one-two-three never'\n"
    hide = lambda text: text.replace("pw-one-two-three", REDACTED)  # noqa: E731
    shown = hide(disk)
    assert document.unmask(shown, disk, "gateway.yaml", hide) == disk


def test_text_without_masks_is_written_as_typed() -> None:
    odd = "gateway:   {state_dir: x}   # spacing kept\n\n\n"
    assert document.unmask(odd, FILE, "gateway.yaml", no_hide) == odd


def test_the_summary_names_keys_and_counts_lines_without_values() -> None:
    after = FILE.replace("- openai/gpt-4o-mini", "- a/b\n      - c/d").replace(
        "sk-abcdefghijklmnop", "${OPENAI_API_KEY}"
    )
    summary = document.summary(FILE, after)
    assert summary.changed == (
        "agents.default.api_key",
        "agents.default.fallbacks[0]",
        "agents.default.fallbacks[1]",
    )
    assert (summary.added_lines, summary.removed_lines) == (3, 2)
    assert "sk-" not in repr(summary) and "OPENAI" not in repr(summary)


def test_the_diff_is_unified_against_the_disk() -> None:
    shown = document.diff("a: 1\nb: 2\n", "a: 1\nb: 3\n", label="gateway.yaml")
    assert shown.splitlines()[:2] == ["--- gateway.yaml (on disk)", "+++ gateway.yaml (edited)"]
    assert "-b: 2" in shown and "+b: 3" in shown


@pytest.mark.parametrize(
    ("value", "clear"),
    [
        ("sk-abc", True),
        ("${OPENAI_API_KEY}", False),
        ("${A:-fallback}", False),
        ("redis://:${REDIS_PASSWORD}@h:6379/0", False),
        ("redis://127.0.0.1:6379/0", False),  # a URL without a password holds no secret
        ("redis://:pw@127.0.0.1:6379/0", True),
        ("https://user:pw@example.com/x", True),
        ("", False),
        (None, False),
        (12345678, True),
    ],
)
def test_what_counts_as_a_secret_in_clear(value: object, clear: bool) -> None:
    assert is_clear(value) is clear


def test_clear_paths_look_only_at_secret_keys() -> None:
    raw = {"agents": {"default": {"api_key": "sk-x", "model": "sk-looking-model"}}}
    paths = {("agents", "default", "api_key"), ("agents", "other", "api_key")}
    assert clear_paths(raw, paths) == [("agents", "default", "api_key")]


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # no browser cross-origin request
        ("http://gw.example:8765", True),
        ("https://gw.example:8765", True),  # TLS ended at a proxy in front
        ("https://evil.example", False),
        ("http://gw.example:8766", False),
        ("null", False),  # a sandboxed frame
    ],
)
def test_a_write_must_come_from_this_gateways_host(origin: str | None, allowed: bool) -> None:
    from aiohttp.test_utils import make_mocked_request

    from chatgate.config_edit.api import same_host

    headers = {"Host": "gw.example:8765"} | ({"Origin": origin} if origin else {})
    assert same_host(make_mocked_request("POST", "/api/config/apply", headers=headers)) is allowed


PIECES = [*"ab:- \n'\"{}[],#&*!|>%@`\t\\", REDACTED, "'" + REDACTED + "'", "url: ", "  - "]
YAMLISH = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=YAMLISH)
def test_any_text_either_unmasks_or_is_a_config_error(text: str) -> None:
    try:
        document.unmask(text, FILE, "gateway.yaml", no_hide)
        document.summary(FILE, text)
    except ConfigError:
        pass
