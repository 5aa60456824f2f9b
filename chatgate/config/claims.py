"""What a channel section refers to or reserves, checked across the whole config at load time.

A channel's descriptor lists its section's claims; the loader checks them all in one place:
named agents exist, named channels are configured, no two sections (nor the gateway) mount
the same HTTP path, and settings that are only safe on loopback stay there.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatgate.config.errors import KeyPath


@dataclass(frozen=True)
class AgentRef:
    """The section names an agent (key path relative to the section)."""

    agent: str
    key: KeyPath


@dataclass(frozen=True)
class ChannelRef:
    """The section sends to another channel instance (e.g. a webhook's `deliver.to`)."""

    channel: str
    key: KeyPath


@dataclass(frozen=True)
class PathClaim:
    """The section mounts an HTTP path on the gateway's port (``prefix``: everything below it)."""

    path: str
    key: KeyPath
    prefix: bool = False


@dataclass(frozen=True)
class LoopbackOnly:
    """The key's value is only safe while the gateway listens on loopback."""

    key: KeyPath
    why: str  # what the value allows
    fix: str  # what to configure instead


Claim = AgentRef | ChannelRef | PathClaim | LoopbackOnly
