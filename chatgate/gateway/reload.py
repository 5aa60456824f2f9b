"""Hot reload (SIGHUP, `chatgate reload`): apply a re-read config without dropping connections.

Policies, lists, rate limits, agents, routes and webhook routes apply at once; a channel whose
connection settings changed (token, mode, API base) is restarted alone; gateway keys bound at
start-up are reported as needing a restart. An invalid file is rejected and the running config kept.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from chatgate.agents.registry import build_agents
from chatgate.config.errors import ConfigError
from chatgate.config.hot import restart_only_changes
from chatgate.config.loader import LoadedConfig, load_config
from chatgate.gateway.runtime import rate_spec, retry_policy
from chatgate.policies.loopguard import BotLoopGuard, LoopPolicy

if TYPE_CHECKING:
    from chatgate.gateway.app import Gateway

log = logging.getLogger("chatgate.reload")


async def apply_reload(gw: Gateway) -> dict[str, Any]:
    old = gw.loaded
    try:
        new = load_config(old.path, env=gw.env, catalog=gw.registry)
        agents = build_agents(new.config, gw.env)
    except ConfigError as exc:
        gw.metrics.reloads.labels(result="rejected").inc()
        log.error("reload rejected; the running config is kept", extra={"error": str(exc)})
        return {"ok": False, "error": str(exc)}

    needs_restart = restart_only_changes(old.config, new.config)
    new.state_dir = old.state_dir  # bound at start-up, like the listening socket
    rt = gw.rt
    # Keep agent objects whose config did not change (they may hold connections or warm state).
    for name in list(agents):
        if name in rt.agents and old.config.agents.get(name) == new.config.agents.get(name):
            agents[name] = rt.agents[name]
    retired = [a for n, a in rt.agents.items() if agents.get(n) is not a]

    restarted, reconfigured = await _apply_channels(gw, old, new)
    gw.loaded = new
    rt.loaded = new
    rt.agents = agents
    gateway = new.config.gateway
    rt.limiter.update_spec(rate_spec(new), now=gw.clock.monotonic())
    if old.config.gateway.loop_guard != gateway.loop_guard:
        rt.loop_guard = BotLoopGuard(
            LoopPolicy(gateway.loop_guard.max_bot_turns, gateway.loop_guard.window_s)
        )
    rt.delivery.policy = retry_policy(new)
    set_limit = getattr(gw.memory_source, "set_limit_mb", None)
    if set_limit is not None:
        set_limit(gateway.memory.limit_mb)
    gw.memory.update(
        shed_ratio=gateway.memory.shed_ratio,
        headroom_ratio=gateway.memory.headroom_ratio,
        interval_s=gateway.memory.interval_s,
    )
    gw.pipeline.reload()
    if gw.on_secrets is not None:
        gw.on_secrets(new.secrets | old.secrets)  # old values may still appear in in-flight logs
    for agent in retired:
        try:
            await agent.aclose()
        except Exception:
            log.exception("closing a replaced agent failed")
    gw.metrics.reloads.labels(result="applied").inc()
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


async def _apply_channels(
    gw: Gateway, old: LoadedConfig, new: LoadedConfig
) -> tuple[list[str], list[str]]:
    before, after = old.channels, new.channels
    restarted: list[str] = []
    reconfigured: list[str] = []
    for name in sorted(set(before) | set(after)):
        if name not in after:
            await gw.channels.remove(name)
            restarted.append(name)
            continue
        section = after[name]
        if name not in before or before[name].platform != section.platform:
            await gw.channels.replace(section)
            restarted.append(name)
            continue
        descriptor = gw.registry.descriptor(section.platform)
        hot, cold = descriptor.hot_change(before[name].config, section.config)
        if cold:
            log.info(
                "channel connection settings changed; restarting it",
                extra={"channel": name, "keys": ",".join(cold)},
            )
            await gw.channels.replace(section)
            restarted.append(name)
        elif hot:
            supervised = gw.channels.channels.get(name)
            if supervised is not None:
                supervised.adapter.reconfigure(section.config)
            reconfigured.append(name)
    return restarted, reconfigured
