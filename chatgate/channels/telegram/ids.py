"""Telegram message identities, shared by the inbound (keys) and outbound (replies) paths.

Telegram message ids are per chat, so chatgate's message id is "<chat_id>:<message_id>";
button presses are "cb:<callback query id>" and carry no message id of their own.
"""

from __future__ import annotations


def message_key(chat_id: int | str, message_id: int | str) -> str:
    """Telegram message ids are per chat, so the idempotency id includes the chat."""
    return f"{chat_id}:{message_id}"


def split_key(key: str) -> tuple[str, int] | None:
    """(chat id, message id) of a message key; None for keys that name no message."""
    chat, _, mid = key.rpartition(":")
    numeric = chat.lstrip("-").isdigit() and mid.lstrip("-").isdigit()  # not "cb:<query id>"
    return (chat, int(mid)) if numeric else None
