"""Matrix channel on mautrix: `/sync` intake, DMs and rooms, threads as sessions, files both
ways, edits and reactions, end-to-end encryption with python-olm when it is installed."""

from __future__ import annotations

import hashlib
from typing import Any

from chatgate.channels.descriptor import CHAT_HOT_KEYS, ChannelDescriptor, secret_lease
from chatgate.channels.matrix.config import MatrixChannelConfig
from chatgate.presentation.file_rules import MB, FileLimits
from chatgate.presentation.limits import PresentationLimits

# An event holds 65,536 bytes; answers split well under it (`max_event_bytes`). No buttons: the
# degrader numbers the choices. Uploads up to the server's `m.upload.size` (checked on send).
FILES = FileLimits(max_bytes=100 * MB, max_caption_chars=4000)
LIMITS = PresentationLimits(
    max_text_length=10_000,
    supports_buttons=False,
    supports_images=True,
    supports_tables=False,
    files=FILES,
)


def _lease(section: Any) -> str | None:
    """One syncing replica per account (user, or the token when no user is named)."""
    if not isinstance(section, MatrixChannelConfig) or not section.enabled:
        return None
    if section.user_id:
        key = f"{section.homeserver_url}|{section.user_id}".encode()
        return f"matrix:{hashlib.sha256(key).hexdigest()[:16]}"
    return secret_lease("matrix", section.access_token) if section.access_token else None


DESCRIPTOR = ChannelDescriptor(
    platform="matrix",
    config_model=MatrixChannelConfig,
    adapter="chatgate.channels.matrix.adapter:MatrixChannel",
    limits=LIMITS,
    hot_keys=CHAT_HOT_KEYS
    | {"edits", "reactions", "ignored_users", "read_receipts", "auto_join", "threads"},
    doctor="chatgate.channels.matrix.doctor:check",
    noisy_loggers=("mau", "chatgate.matrix.http", "aiosqlite"),
    exclusive=_lease,
)
