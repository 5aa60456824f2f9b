"""WhatsApp channel on the official Cloud API: signed webhooks on chatgate's port, Graph API
sends over aiohttp, the 24-hour window with a template fallback, reply buttons and lists.
A phone number is a DM; the Cloud API has no group chats for business numbers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatgate.channels.descriptor import CHAT_HOT_KEYS, ChannelDescriptor, chat_claims
from chatgate.channels.whatsapp.config import WhatsAppChannelConfig
from chatgate.channels.whatsapp.markdown import markdown_to_whatsapp
from chatgate.config.claims import Claim, PathClaim
from chatgate.presentation.file_rules import MB, FileLimits
from chatgate.presentation.limits import PresentationLimits

# 4,096 characters per text message; one interactive menu per message: 3 reply buttons of 20
# characters or a list of 10 rows; row ids hold 200 bytes (longer values go through the
# callback store); no tables; images wait for the media work (sent as links). Uploads: documents
# up to 100 MB, JPEG/PNG images up to 5 MB, audio (voice notes: OGG/Opus) and video up to 16 MB,
# captions 1,024 characters; a bigger image or media file goes as a document.
FILES = FileLimits(
    max_bytes=100 * MB,
    max_caption_chars=1024,
    max_photo_bytes=5 * MB,
    max_media_bytes=16 * MB,
    image_mimes=frozenset({"image/jpeg", "image/png"}),
)
LIMITS = PresentationLimits(
    max_text_length=4096,
    supports_select=True,
    supports_images=False,
    max_buttons=3,
    max_options=10,
    callback_data_max_bytes=200,
    max_label_chars=20,
    buttons_overflow_to_select=True,
    link_buttons=False,
    max_widgets=1,
    files=FILES,
)


def _claims(section: Any) -> Iterable[Claim]:
    yield from chat_claims(section)
    if isinstance(section, WhatsAppChannelConfig):
        yield PathClaim(section.webhook_path, ("webhook_path",))


DESCRIPTOR = ChannelDescriptor(
    platform="whatsapp",
    config_model=WhatsAppChannelConfig,
    adapter="chatgate.channels.whatsapp.adapter:WhatsAppChannel",
    limits=LIMITS,
    markdown=markdown_to_whatsapp,
    hot_keys=CHAT_HOT_KEYS | {"templates", "read_receipts", "quote_replies"},
    claims=_claims,
    doctor="chatgate.channels.whatsapp.doctor:check",
)
