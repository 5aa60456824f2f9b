"""A python agent that crashes with a credential in its exception (a realistic careless error)."""

from __future__ import annotations

import os

from chatgate.agents.base import Turn


def crash(turn: Turn) -> str:
    key = os.environ.get("OPENAI_API_KEY", "")
    raise RuntimeError(f"upstream refused https://api.example/v1?key={key} for {turn.text!r}")
