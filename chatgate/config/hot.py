"""Which config changes apply live on reload, and which need a channel or process restart."""

from __future__ import annotations

from pydantic import BaseModel

from chatgate.config.models import GatewayConfig

# Channel keys a running adapter can take without reconnecting.
HOT_CHANNEL_KEYS = frozenset(
    {
        "agent",
        "dm_policy",
        "group_policy",
        "allowed_users",
        "blocked_users",
        "allowed_chats",
        "stream",
        "pairing_notify",
        "ack_reaction",
        "routes",
    }
)
# gateway.* keys bound at start-up (sockets, files, backends): a change needs a process restart.
RESTART_GATEWAY_KEYS = ("http", "state_dir", "store", "turn_lock", "redis")


def changed_fields(old: BaseModel, new: BaseModel) -> list[str]:
    if type(old) is not type(new):
        return ["type"]
    return [name for name in type(old).model_fields if getattr(old, name) != getattr(new, name)]


def channel_change(old: BaseModel, new: BaseModel) -> tuple[list[str], list[str]]:
    """(hot keys changed, connection keys changed) between two versions of one channel section."""
    changed = changed_fields(old, new)
    hot = [k for k in changed if k in HOT_CHANNEL_KEYS]
    cold = [k for k in changed if k not in HOT_CHANNEL_KEYS]
    return hot, cold


def restart_only_changes(old: GatewayConfig, new: GatewayConfig) -> list[str]:
    """gateway.* keys that changed but only take effect after a process restart."""
    return [
        f"gateway.{key}"
        for key in RESTART_GATEWAY_KEYS
        if getattr(old.gateway, key) != getattr(new.gateway, key)
    ]
