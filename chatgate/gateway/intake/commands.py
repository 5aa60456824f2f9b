"""Built-in chat commands; their replies come from the text catalog (chatgate.texts)."""

from __future__ import annotations

from collections.abc import Collection

from chatgate.feature.intake import Command
from chatgate.policies.pairing import CODE_TTL_S
from chatgate.texts.voice import Voice


def parse_command(text: str, features: Collection[str] = ()) -> str | None:
    """`/new`, `/stop@mybot` … → the built-in Command, or the name of a command a feature
    answers (``features``); anything else (including unknown commands) → None."""
    if not text.startswith("/"):
        return None
    head = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
    name = head.split("@", 1)[0].lower()
    try:
        return Command(name)
    except ValueError:
        return name if name in features else None


def pairing_text(voice: Voice, channel: str, code: str, name: str = "") -> str:
    """The pairing prompt; a private (verbose) bot also shows the approve command."""
    text = voice.pairing(code, name, CODE_TTL_S)
    if voice.verbose:
        text += f"\n\nThey approve it with: chatgate pairing approve {channel} {code}"
    return text


def status_text(
    voice: Voice, *, agent: str, model: str | None, history: int, queued: int, running: bool
) -> str:
    """The `/status` reply in the chat's language (the catalog's `status.*` texts)."""
    return voice.status(agent=agent, model=model, history=history, queued=queued, running=running)
