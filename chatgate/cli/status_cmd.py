"""`chatgate status`: what the running daemon is doing, for humans or as JSON."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any

from chatgate.cli.api_client import call
from chatgate.cli.common import EX_UNAVAILABLE, EX_USAGE, die
from chatgate.config.errors import EX_CONFIG
from chatgate.config.loader import LoadedConfig
from chatgate.gateway.http.local_api import read_endpoint


def run_status(loaded: LoadedConfig, *, as_json: bool, url: str | None) -> int:
    data = call(loaded, "/api/status", url=url)
    if as_json:
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        print(render(data))
    return 0


def run_reload(loaded: LoadedConfig, *, url: str | None) -> int:
    result = call(loaded, "/api/reload", method="POST", url=url)
    if not result.get("ok"):
        print(
            f"reload rejected; the daemon keeps its running config:\n{result.get('error')}",
            file=sys.stderr,
        )
        return EX_CONFIG
    if result.get("unchanged"):
        print(
            f"config unchanged: {result.get('path')} reads the same as the running config. "
            "Edited it? In a container, mount the config's directory, not the single file "
            "(an editor's save makes a new file the mount never sees)."
        )
        return 0
    print("config reloaded")
    for key, label in (
        ("restarted_channels", "restarted"),
        ("reconfigured_channels", "reconfigured live"),
        ("needs_process_restart", "needs a process restart to take effect"),
    ):
        if result.get(key):
            print(f"  {label}: {', '.join(result[key])}")
    return 0


def run_channel_restart(loaded: LoadedConfig, name: str, *, url: str | None) -> int:
    result = call(loaded, f"/api/channels/{name}/restart", method="POST", url=url)
    if not result.get("ok"):
        print(f"chatgate: no channel named {name!r}", file=sys.stderr)
        return EX_USAGE
    print(f"channel {name}: restart requested (budget and backoff reset)")
    return 0


def run_dashboard_link(loaded: LoadedConfig) -> int:
    """A sign-in link carrying the running daemon's local token in the URL fragment (which the
    browser never sends to the server); it stops working when that daemon process exits."""
    endpoint = read_endpoint(loaded.state_dir)
    if endpoint is None:
        die(f"chatgate is not running (no live daemon for {loaded.state_dir})", EX_UNAVAILABLE)
    print(f"{endpoint.url}/dashboard#token={endpoint.token}")
    print(
        "valid until this daemon exits; with gateway.api_token set you can sign in with it instead",
        file=sys.stderr,
    )
    return 0


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _clock(epoch: float | None) -> str:
    if not epoch:
        return "-"
    return dt.datetime.fromtimestamp(epoch).strftime("%H:%M:%S")


def _mib(value: Any) -> str:
    return f"{value / 1048576:.1f} MiB" if isinstance(value, int | float) else "unknown"


def render(data: dict[str, Any]) -> str:
    state = "draining" if data.get("draining") else ("ready" if data.get("ready") else "starting")
    http = data.get("http", {})
    lines = [
        f"chatgate {data.get('version')} — {state}, up {_duration(data.get('uptime_s', 0))}, "
        f"http {http.get('host')}:{http.get('port')}",
        "channels:",
    ]
    for ch in data.get("channels", []):
        line = f"  {ch['name']:<12} {ch['state']:<15} since {_clock(ch.get('since'))}"
        if ch.get("next_retry_at"):
            line += f", retry at {_clock(ch['next_retry_at'])}"
        if ch.get("restarts"):
            line += f", {ch['restarts']} restarts"
        lines.append(line)
        if ch.get("summary"):
            lines.append(f"    {ch['summary']}")
        if ch.get("error"):
            lines.append(f"    why: {ch['error']}")
        if ch.get("hint"):
            lines.append(f"    fix: {ch['hint']}")
        last = ch.get("last_error")
        if isinstance(last, dict) and last.get("error") and last.get("error") != ch.get("error"):
            lines.append(f"    last error at {_clock(last.get('at'))}: {last['error']}")
            if last.get("hint"):
                lines.append(f"    fix: {last['hint']}")
        for name, route in (ch.get("routes") or {}).items():
            conf = "" if route.get("configured") else "  (not configured: secret empty)"
            lines.append(f"    route {name}: POST {route['path']} ({route['respond']}){conf}")
    if not data.get("channels"):
        lines.append("  (none configured)")
    cluster = data.get("cluster")
    if cluster and cluster.get("shared"):
        if cluster.get("error"):
            lines.append(f"replica {cluster.get('replica')}: {cluster['error']}")
        else:
            owned = ", ".join(cluster.get("owned") or []) or "none (standby for exclusive channels)"
            peers = ", ".join(cluster.get("peers") or []) or "none"
            lines.append(f"replica {cluster.get('replica')}: owns {owned}; peers: {peers}")
    breaker = data.get("breaker")
    if breaker and breaker.get("tripped"):
        lines.append(f"fleet breaker: TRIPPED until {_clock(breaker.get('until'))}")
    elif breaker:
        lines.append(
            f"fleet breaker: armed (trips at {breaker.get('restarts_per_hour')} restarts/h or "
            f"{breaker.get('failing_fraction', 0):.0%} of channels failing)"
        )
    agents = ", ".join(
        f"{a['name']} ({a['backend']}{': ' + a['model'] if a.get('model') else ''})"
        for a in data.get("agents", [])
    )
    lines.append(f"agents: {agents or '-'}")
    lines += mcp_lines(data.get("mcp_servers") or [])
    s = data.get("sessions", {})
    lines.append(
        f"sessions: {s.get('warm', 0)} warm, {s.get('active_turns', 0)} turns running, "
        f"{s.get('queued', 0)} queued, {s.get('evictions', 0)} evicted"
    )
    dead = data.get("dead_targets") or {}
    entries, pending = data.get("dlq", {}).get("entries"), data.get("pairing", {}).get("pending")
    lines.append(
        f"dlq: {_known(entries)} entries · dead targets: {len(dead)} · "
        f"pairing pending: {_known(pending)}"
    )
    for error in data.get("state_errors") or []:
        lines.append(f"state store unavailable: {error}")
    jobs = data.get("jobs") or []
    if jobs:
        from chatgate.cli.jobs_cmd import job_lines

        lines.append(f"jobs: {len(jobs)}")
        lines += ["  " + line for line in job_lines(jobs)]
    paused = (data.get("chats") or {}).get("paused") or []
    if paused:
        from chatgate.cli.chats_cmd import paused_line

        lines.append(f"paused chats (a human answers): {len(paused)}")
        lines += ["  " + paused_line(p) for p in paused]
    degraded = data.get("degraded") or []
    if degraded:
        lines.append("degraded:")
        for owner in degraded:
            lines.append(
                f"  {owner.get('owner_kind')} {owner.get('owner_id')}: {owner.get('reason')}"
            )
            if owner.get("retry_hint"):
                lines.append(f"    fix: {owner['retry_hint']}")
    mem = data.get("memory", {})
    limit, ratio = mem.get("limit_bytes"), mem.get("ratio")
    memory = f"memory: rss {_mib(mem.get('rss_bytes'))}"
    memory += (
        f" of {_mib(limit)}" if limit else " (no limit found: cgroup or gateway.memory.limit_mb)"
    )
    if isinstance(ratio, int | float):
        memory += f" ({ratio:.0%})"
    if mem.get("shedding"):
        memory += ", SHEDDING new turns"
    lines.append(memory + f", {mem.get('evictions', 0)} warm sessions evicted")
    loop = data.get("event_loop") or {}
    if loop:
        health = "" if loop.get("healthy", True) else ", UNHEALTHY"
        lines.append(
            f"event loop: {loop.get('implementation', '?')}, lag {loop.get('lag_s', 0):.3f} s "
            f"(limit {loop.get('max_lag_s', '?')} s){health}"
        )
    for warning in data.get("warnings", []):
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


def mcp_lines(servers: list[dict[str, Any]]) -> list[str]:
    """Each MCP server: state, tools, restarts and why it is down."""
    lines = []
    for server in servers:
        tools = server.get("tools") or []
        restarts = f", {server['restarts']} restarts" if server.get("restarts") else ""
        lines.append(
            f"mcp server {server.get('name')} ({server.get('transport')}): "
            f"{server.get('state')}, {len(tools)} tools{restarts}"
        )
        if tools:
            lines.append(f"    tools: {', '.join(tools)}")
        if server.get("error"):
            lines.append(f"    why: {server['error']}")
    return lines


def _known(value: object) -> str:
    """A count read from the state store, or "?" while the store was unavailable."""
    return "?" if value is None else str(value)
