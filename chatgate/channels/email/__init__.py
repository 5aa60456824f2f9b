"""Email channel: IMAP IDLE in (aioimaplib), SMTP out (aiosmtplib), a thread is a session.

Every mail is a direct conversation with its sender; replies carry In-Reply-To and References
so mail clients thread them. One replica watches a mailbox (the channel lease); any may send.
"""

from __future__ import annotations

from typing import Any

from chatgate.channels.descriptor import CHAT_HOT_KEYS, ChannelDescriptor
from chatgate.channels.email.config import EmailChannelConfig
from chatgate.presentation.file_rules import MB, FileLimits
from chatgate.presentation.limits import PresentationLimits

# One mail per answer: no chunking in practice; files ride along as attachments (most
# providers refuse mail over 25 MB, and base64 adds a third).
FILES = FileLimits(max_bytes=18 * MB, max_caption_chars=1000)
LIMITS = PresentationLimits(
    max_text_length=200_000,
    supports_buttons=False,
    supports_select=False,
    supports_tables=False,
    link_buttons=False,
    files=FILES,
)


def _exclusive(section: Any) -> str | None:
    """One IDLE watcher per mailbox folder: two would answer each mail twice."""
    if isinstance(section, EmailChannelConfig):
        imap = section.imap
        return f"email:{imap.host}:{imap.port}:{imap.username or ''}:{imap.folder}"
    return None


DESCRIPTOR = ChannelDescriptor(
    platform="email",
    config_model=EmailChannelConfig,
    adapter="chatgate.channels.email.adapter:EmailChannel",
    limits=LIMITS,
    hot_keys=CHAT_HOT_KEYS | {"require_authentication_results", "authserv_id"},
    doctor="chatgate.channels.email.doctor:check",
    noisy_loggers=("aioimaplib", "aiosmtplib", "mail.log"),
    exclusive=_exclusive,
)
