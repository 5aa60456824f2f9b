"""Slack channel on slack-bolt: Socket Mode or the Events API, threads as sessions, Block Kit,
streaming by chat.update (no slack_sdk import here: the adapter imports it when it starts)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatgate.channels.descriptor import CHAT_HOT_KEYS, ChannelDescriptor, chat_claims, secret_lease
from chatgate.channels.slack.config import SlackChannelConfig
from chatgate.channels.slack.markdown import markdown_to_slack_mrkdwn
from chatgate.config.claims import Claim, PathClaim
from chatgate.presentation.file_rules import MB, FileLimits
from chatgate.presentation.limits import PresentationLimits

# 3,000 characters per section block (our chunk size, also for plain text); 25 elements per
# actions block; 100 options per select; an option value holds 150 characters (button values
# 2,000): longer values go through the callback store.
LIMITS = PresentationLimits(
    max_text_length=3000,
    supports_select=True,
    supports_tables=True,
    max_buttons=25,
    max_options=100,
    callback_data_max_bytes=150,
    max_table_rows=50,
    max_table_cols=10,
    files=FileLimits(  # 1 GB per file; the comment posted with it is a message (4,000 chars)
        max_bytes=1024 * MB,
        max_caption_chars=4000,
        kinds=frozenset({"image", "document", "audio", "video"}),
    ),
)


def _claims(section: Any) -> Iterable[Claim]:
    yield from chat_claims(section)
    if isinstance(section, SlackChannelConfig) and section.mode == "events":
        yield PathClaim(section.events_path, ("events_path",))


def _exclusive(section: Any) -> str | None:
    """Socket Mode spreads envelopes over every open socket of an app; one replica holds it so a
    restart of one never leaves two half-listening. Events API requests go to every replica."""
    if isinstance(section, SlackChannelConfig) and section.mode == "socket" and section.app_token:
        return secret_lease("slack", section.app_token)
    return None


DESCRIPTOR = ChannelDescriptor(
    platform="slack",
    config_model=SlackChannelConfig,
    adapter="chatgate.channels.slack.adapter:SlackChannel",
    limits=LIMITS,
    markdown=markdown_to_slack_mrkdwn,
    hot_keys=CHAT_HOT_KEYS | {"done_reaction", "failed_reaction", "stale_after_s"},
    claims=_claims,
    doctor="chatgate.channels.slack.doctor:check",
    noisy_loggers=("slack_bolt", "slack_sdk"),
    exclusive=_exclusive,
)
