"""Which `gateway.*` changes apply live on reload, and which need a process restart.

Channel sections decide for themselves: each channel's descriptor lists its hot keys.
"""

from __future__ import annotations

from chatgate.config.models import GatewayConfig

# gateway.* keys bound at start-up (sockets, files, backends): a change needs a process restart.
RESTART_GATEWAY_KEYS = ("http", "state_dir", "store", "turn_lock", "redis", "event_loop")


def restart_only_changes(old: GatewayConfig, new: GatewayConfig) -> list[str]:
    """gateway.* keys that changed but only take effect after a process restart."""
    changed = [
        f"gateway.{key}"
        for key in RESTART_GATEWAY_KEYS
        if getattr(old.gateway, key) != getattr(new.gateway, key)
    ]
    if old.mcp_servers != new.mcp_servers:  # running servers keep their start-up settings
        changed.append("mcp_servers")
    if old.telemetry != new.telemetry:  # the tracer provider is made once, at start
        changed.append("telemetry")
    return changed
