"""`chatgate init`: write the starter gateway.yaml (the one the repository ships) for a pip install.

The wheel carries it as package data, so `pip install chatgate && chatgate init && chatgate run`
works without the source tree. Secrets stay out of it: every credential is a `${VAR}`.
"""

from __future__ import annotations

import sys
from importlib.resources import files
from pathlib import Path

EX_CANTCREAT = 73


def starter_text() -> str:
    return files("chatgate.cli").joinpath("starter.yaml").read_text(encoding="utf-8")


def run_init(output: str | None, *, force: bool) -> int:
    target = Path(output or "gateway.yaml")
    if target.exists() and not force:
        print(f"chatgate init: {target} exists; pass --force to replace it", file=sys.stderr)
        return EX_CANTCREAT
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(starter_text(), encoding="utf-8")
        target.chmod(0o644)  # no secrets in it: credentials come from the environment
    except OSError as exc:
        print(f"chatgate init: cannot write {target}: {exc.strerror}", file=sys.stderr)
        return EX_CANTCREAT
    print(f"wrote {target}: the echo agent and the web chat on 127.0.0.1:8765.")
    print(f"  chatgate run --config {target}    then open http://127.0.0.1:8765/chat")
    print("  set OPENAI_API_KEY (and CHATGATE_WEBCHAT_AGENT=default) for a real model")
    return 0
