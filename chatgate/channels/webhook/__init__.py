"""Generic signed-webhook ingress: HMAC-verified HTTP events become agent turns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chatgate.channels.descriptor import ChannelDescriptor
from chatgate.channels.webhook.config import WebhookChannelConfig
from chatgate.config.claims import AgentRef, ChannelRef, Claim, PathClaim
from chatgate.model.messages import RouteHint
from chatgate.presentation.limits import PresentationLimits

# One large markdown document per answer, no interactive widgets.
LIMITS = PresentationLimits(
    max_text_length=1_000_000, supports_buttons=False, max_table_rows=1000, max_table_cols=50
)


def _claims(section: Any) -> Iterable[Claim]:
    if not isinstance(section, WebhookChannelConfig):
        return
    for name, route in section.routes.items():
        yield AgentRef(route.agent, ("routes", name, "agent"))
        yield PathClaim(route.path, ("routes", name, "path"))
        if route.deliver is not None:
            yield ChannelRef(route.deliver.to.split(":", 1)[0], ("routes", name, "deliver", "to"))


def _hints(section: Any) -> Mapping[str, RouteHint]:
    """A configured route is signed, operator-owned ingress: trusted, with its own agent; without
    a session template each delivery is a one-shot conversation."""
    if not isinstance(section, WebhookChannelConfig):
        return {}
    return {
        name: RouteHint(agent=route.agent, trusted=True, ephemeral=route.session is None)
        for name, route in section.routes.items()
    }


DESCRIPTOR = ChannelDescriptor(
    platform="webhook",
    config_model=WebhookChannelConfig,
    adapter="chatgate.channels.webhook.adapter:WebhookChannel",
    limits=LIMITS,
    hot_keys=frozenset({"routes"}),
    claims=_claims,
    route_hints=_hints,
    doctor="chatgate.channels.webhook.doctor:check",
)
