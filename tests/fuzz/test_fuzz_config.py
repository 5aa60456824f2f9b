"""Fuzz the config loader with mutated gateway.yaml files.

Invariant: a file either loads or raises ConfigError (exit 78) whose every issue names a key path
(and a line below the root), never another exception, and never a secret's value.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from chatgate.channels.registry import ChannelRegistry
from chatgate.config import ConfigError
from chatgate.config.loader import load_config_text
from tests.fuzz.conftest import fuzz_settings

CANARIES = {
    "OPENAI_API_KEY": "sk-CANARYmodelkey0fuzz",
    "TG_TOKEN": "123456789:CANARYtelegramTokenFuzz0123456789ab",
    "HOOK_SECRET": "whsec-CANARYhook-fuzz",
    "API_TOKEN": "CANARYapiToken0123456789abcdefXYZ",
}
BASE = """config_version: 1
gateway:
  http: {host: 127.0.0.1, port: 8765}
  api_token: ${API_TOKEN}
  state_dir: .chatgate
  log: {level: info, format: text}
  rate_limits:
    per_sender: {rate_per_s: 0.5, burst: 10}
agents:
  default: &agent
    backend: litellm
    model: openai/gpt-4o-mini
    api_key: ${OPENAI_API_KEY}
    timeout_s: 60
  other:
    <<: *agent
    model: openai/other
channels:
  telegram:
    token: ${TG_TOKEN}
    dm_policy: pairing
    allowed_users: [1, 2]
  webhook:
    routes:
      gh:
        path: /hooks/gh
        secret: ${HOOK_SECRET}
        signature: github
        prompt: "New: {payload.title}"
routes:
  - {match: {channel: telegram, chat_id: "-100123"}, agent: other}
"""
LINES = BASE.splitlines()
JUNK = [
    "",
    "null",
    "[]",
    "{}",
    "&a x",
    "*a",
    "*agent",
    "!!float x",
    "!!int 0x",
    "!!binary ###",
    "!!python/object:os.system x",
    "2001-13-45",
    "${OPENAI_API_KEY}",
    "${TG_TOKEN}",
    '"${HOOK_SECRET}"',
    "${UNSET:?needs a value}",
    "${",
    "$${X}",
    "\x00",
    "\x07",
    "'",
    '"',
    "- ",
    "{",
    "[",
    "1e999",
    "-1",
    "0",
    "true",
    "x" * 5000,
    "[" * 100 + "]" * 100,
    ":",
    "? x",
    "<<: *agent",
    "\t",
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    lines = list(LINES)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        op = draw(st.sampled_from(["delete", "dup", "value", "insert", "text", "indent"]))
        i = draw(st.integers(min_value=0, max_value=len(lines) - 1)) if lines else 0
        if not lines:
            lines = [draw(st.text(max_size=30))]
        elif op == "delete":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "value":
            head, sep, _ = lines[i].partition(": ")
            junk = draw(st.sampled_from(JUNK) | st.text(max_size=20))
            lines[i] = f"{head}{sep or ': '}{junk}"
        elif op == "insert":
            lines.insert(i, draw(st.sampled_from(JUNK) | st.text(max_size=30)))
        elif op == "text":
            pos = draw(st.integers(min_value=0, max_value=len(lines[i])))
            lines[i] = lines[i][:pos] + draw(st.text(max_size=8)) + lines[i][pos:]
        else:
            lines[i] = " " * draw(st.integers(0, 6)) + lines[i].lstrip()
    return "\n".join(lines) + "\n"


CATALOG = ChannelRegistry(plugins=False)


@fuzz_settings("config")
@given(text=mutated())
def test_config_loader_invariants(text: str) -> None:
    try:
        load_config_text(text, Path("/nonexistent/gateway.yaml"), CANARIES, catalog=CATALOG)
    except ConfigError as error:
        assert error.exit_code == 78
        rendered = error.render()
        for canary in CANARIES.values():
            assert canary.lower() not in rendered.lower(), rendered
        for issue in error.issues:
            assert issue.file is not None, rendered
            if issue.path:
                assert issue.line is not None, rendered
