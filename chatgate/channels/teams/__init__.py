"""Microsoft Teams channel on the Teams SDK for Python (`microsoft-teams-api`): Bot Framework
activities posted to chatgate's own port, their JWT verified against the cloud's signing keys,
answers through the Bot Connector. Personal chats are DMs, each channel thread a session,
buttons and menus Adaptive Cards."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatgate.channels.descriptor import CHAT_HOT_KEYS, ChannelDescriptor, chat_claims
from chatgate.channels.teams.config import TeamsChannelConfig
from chatgate.config.claims import Claim, PathClaim
from chatgate.presentation.file_rules import MB, FileLimits
from chatgate.presentation.limits import PresentationLimits

# Teams takes ~28 KB per message (text and cards together); an Adaptive Card shows up to 6
# actions in a row before it folds; choice sets hold long lists; card data holds long values.
# Files go as signed download links on chatgate's public URL (as the web chat serves them).
LIMITS = PresentationLimits(
    max_text_length=24_000,
    supports_select=True,
    supports_images=False,
    max_buttons=6,
    max_options=100,
    callback_data_max_bytes=1024,
    max_label_chars=40,
    buttons_overflow_to_select=True,
    max_widgets=1,
    files=FileLimits(max_bytes=50 * MB, max_caption_chars=4000),
)


def _claims(section: Any) -> Iterable[Claim]:
    yield from chat_claims(section)
    if isinstance(section, TeamsChannelConfig):
        yield PathClaim(section.messaging_path, ("messaging_path",))


DESCRIPTOR = ChannelDescriptor(
    platform="teams",
    config_model=TeamsChannelConfig,
    adapter="chatgate.channels.teams.adapter:TeamsChannel",
    limits=LIMITS,
    hot_keys=CHAT_HOT_KEYS | {"allowed_tenants", "edits", "typing_every_s"},
    claims=_claims,
    doctor="chatgate.channels.teams.doctor:check",
    noisy_loggers=("httpx", "microsoft_teams"),
)
