"""Hot reload (SIGHUP, `chatgate reload`): apply a re-read config without dropping connections.

The new file is validated first (an invalid one is rejected and the running config kept); then
the channel directory takes the channel sections (hot keys live, a channel whose connection
settings changed is rebuilt alone), the runtime's components take the rest, and gateway keys
bound at start-up are reported as needing a restart.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from chatgate.agents.registry import build_agents
from chatgate.config.errors import ConfigError
from chatgate.config.hot import restart_only_changes
from chatgate.config.loader import load_config

if TYPE_CHECKING:
    from chatgate.gateway.app import Gateway

log = logging.getLogger("chatgate.reload")


async def apply_reload(gw: Gateway) -> dict[str, Any]:
    rt = gw.rt
    old = rt.loaded
    try:
        new = load_config(old.path, env=gw.env, catalog=gw.registry)
        agents = build_agents(new.config, gw.env)
    except ConfigError as exc:
        rt.metrics.reloads.labels(result="rejected").inc()
        log.error("reload rejected; the running config is kept", extra={"error": str(exc)})
        return {"ok": False, "error": str(exc)}

    needs_restart = restart_only_changes(old.config, new.config)
    new.state_dir = old.state_dir  # bound at start-up, like the listening socket
    # Keep agent objects whose config did not change (they may hold connections or warm state).
    for name in list(agents):
        if name in rt.agents and old.config.agents.get(name) == new.config.agents.get(name):
            agents[name] = rt.agents[name]
    retired = [a for n, a in rt.agents.items() if agents.get(n) is not a]

    restarted, reconfigured = await rt.channels.apply(old, new)
    rt.apply_config(new, agents)
    gw.pipeline.apply_config()
    if gw.on_secrets is not None:
        gw.on_secrets(new.secrets | old.secrets)  # old values may still appear in in-flight logs
    for agent in retired:
        try:
            await agent.aclose()
        except Exception:
            log.exception("closing a replaced agent failed")
    rt.metrics.reloads.labels(result="applied").inc()
    result = {
        "ok": True,
        "restarted_channels": restarted,
        "reconfigured_channels": reconfigured,
        "needs_process_restart": needs_restart,
    }
    log.info(
        "config reloaded", extra={k: ",".join(v) for k, v in result.items() if isinstance(v, list)}
    )
    for key in needs_restart:
        log.warning("changed setting takes effect after a restart", extra={"key": key})
    return result
