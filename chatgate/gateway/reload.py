"""Hot reload (SIGHUP, `chatgate reload`): apply a re-read config without dropping connections.

The new file is validated first (an invalid one is rejected and the running config kept); then
the channel directory takes the channel sections (hot keys live, a channel whose connection
settings changed is rebuilt alone), the runtime's components take the rest, and gateway keys
bound at start-up are reported as needing a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chatgate.agents.base import Agent
from chatgate.agents.registry import build_agents
from chatgate.config.errors import ConfigError
from chatgate.config.hot import restart_only_changes
from chatgate.config.loader import ChannelCatalog, LoadedConfig, load_config
from chatgate.gateway.runtime import Runtime

log = logging.getLogger("chatgate.reload")


async def _unchanged(runtime: Runtime, agents: Mapping[str, Agent]) -> dict[str, Any]:
    """Nothing to apply. Said out loud: an editor that replaces the file behind a single-file
    bind mount leaves this process reading the old inode."""
    for agent in agents.values():  # built for the comparison, never used
        await _close(agent)
    runtime.metrics.reloads.labels(result="unchanged").inc()
    path = str(runtime.loaded.path)
    log.info("config unchanged; nothing to reload", extra={"path": path})
    return {"ok": True, "unchanged": True, "path": path, "restarted_channels": [],
            "reconfigured_channels": [], "needs_process_restart": []}  # fmt: skip


def _keep_unchanged_agents(
    runtime: Runtime, new: LoadedConfig, agents: dict[str, Agent]
) -> list[Agent]:
    """Keep the agent objects whose config did not change (they may hold connections or warm
    state) in ``agents``; the running ones no longer used, to close."""
    old = runtime.loaded
    for name in list(agents):
        if name in runtime.agents and old.config.agents.get(name) == new.config.agents.get(name):
            agents[name] = runtime.agents[name]
    return [a for n, a in runtime.agents.items() if agents.get(n) is not a]


async def apply_reload(
    runtime: Runtime,
    *,
    catalog: ChannelCatalog,
    env: Mapping[str, str],
    followers: Sequence[Callable[[], None]] = (),
    on_secrets: Callable[[frozenset[str]], None] | None = None,
) -> dict[str, Any]:
    """Re-read ``rt``'s config file and apply it; ``followers`` re-derive what they keep from
    the config once the runtime has the new one (the pipeline's policies and hints)."""
    old = runtime.loaded
    try:
        new = load_config(old.path, env=env, catalog=catalog)
        agents = build_agents(
            new.config, env, runtime.tools.hub if runtime.tools is not None else None
        )
    except ConfigError as exc:
        runtime.metrics.reloads.labels(result="rejected").inc()
        log.error("reload rejected; the running config is kept", extra={"error": str(exc)})
        return {"ok": False, "error": str(exc)}

    if (new.config, new.channels) == (old.config, old.channels):
        return await _unchanged(runtime, agents)
    needs_restart = restart_only_changes(old.config, new.config)
    new.state_dir = old.state_dir  # bound at start-up, like the listening socket
    retired = _keep_unchanged_agents(runtime, new, agents)

    restarted, reconfigured = await runtime.channels.apply(old, new)
    runtime.apply_config(new, agents)
    for follow in followers:
        follow()
    if on_secrets is not None:
        on_secrets(new.secrets | old.secrets)  # old values may still appear in in-flight logs
    for agent in retired:
        await _close(agent)
    runtime.metrics.reloads.labels(result="applied").inc()
    result = {
        "ok": True,
        "restarted_channels": restarted,
        "reconfigured_channels": reconfigured,
        "needs_process_restart": needs_restart,
        "unchanged": False,
    }
    log.info(
        "config reloaded", extra={k: ",".join(v) for k, v in result.items() if isinstance(v, list)}
    )
    for key in needs_restart:
        log.warning("changed setting takes effect after a restart", extra={"key": key})
    return result


async def _close(agent: Any) -> None:
    try:
        await agent.aclose()
    except Exception:
        log.exception("closing a replaced agent failed")
