"""Browser web chat: a page, a small ES module and Server-Sent Events on the gateway's port."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chatgate.channels.descriptor import CHAT_HOT_KEYS, ChannelDescriptor, chat_claims
from chatgate.channels.webchat.config import WebChatChannelConfig
from chatgate.config.claims import AgentRef, Claim, LoopbackOnly, PathClaim
from chatgate.model.messages import RouteHint
from chatgate.presentation.file_rules import MB, FileLimits
from chatgate.presentation.limits import PresentationLimits
from chatgate.presentation.markdown import markdown_to_html

# The browser renders markdown, tables, buttons and selects; images and charts degrade to text
# (the page's Content-Security-Policy loads nothing from other origins).
LIMITS = PresentationLimits(
    max_text_length=100_000,
    supports_select=True,
    supports_tables=True,
    supports_images=False,
    max_buttons=25,
    max_table_rows=200,
    max_table_cols=20,
    files=FileLimits(max_bytes=50 * MB, max_caption_chars=4000),  # served by signed links
)
AGENT_ROUTE = "agent:"


def _claims(section: Any) -> Iterable[Claim]:
    yield from chat_claims(section)
    if isinstance(section, WebChatChannelConfig):
        yield PathClaim(section.path, ("path",), prefix=True)
        for index, agent in enumerate(section.agents):
            yield AgentRef(agent, ("agents", index))
        if section.auth == "open":
            yield LoopbackOnly(
                ("auth",),
                "'open' lets anyone who can reach the port chat with the bot",
                "use auth: token and set a token",
            )


def _hints(section: Any) -> Mapping[str, RouteHint]:
    """Each agent the operator listed is a route a visitor may pick; none is trusted."""
    if not isinstance(section, WebChatChannelConfig):
        return {}
    return {AGENT_ROUTE + agent: RouteHint(agent=agent) for agent in section.agents}


DESCRIPTOR = ChannelDescriptor(
    platform="webchat",
    config_model=WebChatChannelConfig,
    adapter="chatgate.channels.webchat.adapter:WebChatChannel",
    limits=LIMITS,
    markdown=markdown_to_html,
    hot_keys=CHAT_HOT_KEYS | {"agents", "title", "max_input_chars"},
    claims=_claims,
    route_hints=_hints,
    doctor="chatgate.channels.webchat.doctor:check",
)
