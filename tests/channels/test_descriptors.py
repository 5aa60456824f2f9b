"""Every channel package describes itself once: config model, limits, claims, hints, checks."""

from __future__ import annotations

import pytest

from chatgate.channels.registry import BUILTIN, ChannelRegistry
from chatgate.channels.webhook.config import WebhookChannelConfig
from chatgate.config.claims import AgentRef, ChannelRef, PathClaim
from chatgate.presentation.limits import PresentationLimits

REGISTRY = ChannelRegistry(plugins=False)


@pytest.mark.parametrize(
    ("platform", "length", "buttons", "select", "markdown", "callback"),
    [
        ("telegram", 4096, True, False, True, 64),
        ("webhook", 1_000_000, False, False, True, None),
    ],
)
def test_platform_limits(
    platform: str, length: int, buttons: bool, select: bool, markdown: bool, callback: int | None
) -> None:
    limits = REGISTRY.descriptor(platform).limits
    assert isinstance(limits, PresentationLimits)
    assert limits.max_text_length == length
    assert limits.supports_buttons is buttons
    assert limits.supports_select is select
    assert limits.supports_markdown is markdown
    assert limits.callback_data_max_bytes == callback


@pytest.mark.parametrize("platform", sorted(BUILTIN))
def test_descriptor_is_complete_and_cheap(platform: str) -> None:
    descriptor = REGISTRY.descriptor(platform)
    assert descriptor.platform == platform
    assert descriptor.doctor_check() is not None
    assert descriptor.adapter_class().platform == platform


def test_webhook_routes_claim_paths_agents_and_targets_and_grant_hints() -> None:
    section = WebhookChannelConfig.model_validate(
        {
            "routes": {
                "gh": {
                    "path": "/hooks/gh",
                    "secret": "s",
                    "agent": "ops",
                    "respond": "async",
                    "deliver": {"to": "telegram:42"},
                },
                "once": {"path": "/hooks/once", "signature": "none", "session": "{payload.id}"},
            }
        }
    )
    descriptor = REGISTRY.descriptor("webhook")
    claims = set(descriptor.claims(section))
    assert AgentRef("ops", ("routes", "gh", "agent")) in claims
    assert PathClaim("/hooks/gh", ("routes", "gh", "path")) in claims
    assert ChannelRef("telegram", ("routes", "gh", "deliver", "to")) in claims
    hints = descriptor.route_hints(section)
    assert hints["gh"].trusted and hints["gh"].ephemeral and hints["gh"].agent == "ops"
    assert hints["once"].trusted and not hints["once"].ephemeral


@pytest.mark.parametrize(
    ("platform", "native"),
    [
        ("telegram", '<b>hi</b> <a href="https://e.x">doc</a>'),
        ("webchat", '<b>hi</b> <a href="https://e.x">doc</a>'),
        ("slack", "*hi* <https://e.x|doc>"),
        ("discord", "**hi** [doc](https://e.x)"),
        ("whatsapp", "*hi* doc (https://e.x)"),
        ("webhook", "**hi** [doc](https://e.x)"),  # a markdown document: as written
    ],
)
def test_the_descriptor_names_the_platforms_markdown(platform: str, native: str) -> None:
    assert REGISTRY.descriptor(platform).markdown("**hi** [doc](https://e.x)") == native
