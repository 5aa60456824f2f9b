"""`chatgate status`: what the running daemon is doing, for humans or as JSON."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chatgate.cli.api_client import call
from chatgate.cli.common import EX_UNAVAILABLE, EX_USAGE, die
from chatgate.config.errors import EX_CONFIG
from chatgate.config.loader import LoadedConfig
from chatgate.gateway.http.local_api import read_endpoint
from chatgate.operator.status import ChannelView, McpServerView, StatusSnapshot


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
    """The status for humans, one part after another."""
    snap = StatusSnapshot.from_json(data)
    lines: list[str] = []
    for part in PARTS:
        lines += part(snap)
    return "\n".join(lines)


def _head(snap: StatusSnapshot) -> list[str]:
    state = "draining" if snap.draining else ("ready" if snap.ready else "starting")
    return [
        f"chatgate {snap.version} — {state}, up {_duration(snap.uptime_s)}, "
        f"http {snap.http_host}:{snap.http_port}",
        "channels:",
    ]


def _channels(snap: StatusSnapshot) -> list[str]:
    lines = [line for ch in snap.channels for line in channel_lines(ch)]
    return lines or ["  (none configured)"]


def channel_lines(ch: ChannelView) -> list[str]:
    """A channel's state line, then why it is down and how to fix it, then its routes."""
    line = f"  {ch.name:<12} {ch.state:<15} since {_clock(ch.since)}"
    if ch.next_retry_at:
        line += f", retry at {_clock(ch.next_retry_at)}"
    if ch.restarts:
        line += f", {ch.restarts} restarts"
    lines = [line]
    lines += [f"    {ch.summary}"] if ch.summary else []
    lines += [f"    why: {ch.error}"] if ch.error else []
    lines += [f"    fix: {ch.hint}"] if ch.hint else []
    last = ch.last_error
    if last is not None and last.error != ch.error:
        lines.append(f"    last error at {_clock(last.at)}: {last.error}")
        lines += [f"    fix: {last.hint}"] if last.hint else []
    for route in ch.routes:
        conf = "" if route.configured else "  (not configured: secret empty)"
        lines.append(f"    route {route.name}: POST {route.path} ({route.respond}){conf}")
    return lines


def _cluster(snap: StatusSnapshot) -> list[str]:
    cluster = snap.cluster
    if cluster is None or not cluster.shared:
        return []
    if cluster.error:
        return [f"replica {cluster.replica}: {cluster.error}"]
    owned = ", ".join(cluster.owned) or "none (standby for exclusive channels)"
    peers = ", ".join(cluster.peers) or "none"
    return [f"replica {cluster.replica}: owns {owned}; peers: {peers}"]


def _breaker(snap: StatusSnapshot) -> list[str]:
    breaker = snap.breaker
    if breaker is None:
        return []
    if breaker.tripped:
        return [f"fleet breaker: TRIPPED until {_clock(breaker.until)}"]
    return [
        f"fleet breaker: armed (trips at {breaker.restarts_per_hour} restarts/h or "
        f"{breaker.failing_fraction:.0%} of channels failing)"
    ]


def _agents(snap: StatusSnapshot) -> list[str]:
    agents = ", ".join(
        f"{a.name} ({a.backend}{': ' + a.model if a.model else ''})" for a in snap.agents
    )
    return [f"agents: {agents or '-'}", *server_lines(snap.mcp_servers)]


def _counts(snap: StatusSnapshot) -> list[str]:
    s = snap.sessions
    return [
        f"sessions: {s.warm} warm, {s.active_turns} turns running, "
        f"{s.queued} queued, {s.evictions} evicted",
        f"dlq: {_known(snap.dlq_entries)} entries · dead targets: {snap.dead_targets} · "
        f"pairing pending: {_known(snap.pairing_pending)}",
        *(f"state store unavailable: {error}" for error in snap.state_errors),
    ]


def _jobs(snap: StatusSnapshot) -> list[str]:
    jobs = snap.sections.get("jobs") or []
    if not jobs:
        return []
    from chatgate.cli.jobs_cmd import job_lines

    return [f"jobs: {len(jobs)}", *("  " + line for line in job_lines(jobs))]


def _paused(snap: StatusSnapshot) -> list[str]:
    paused = (snap.sections.get("chats") or {}).get("paused") or []
    if not paused:
        return []
    from chatgate.cli.chats_cmd import paused_line

    return [
        f"paused chats (a human answers): {len(paused)}",
        *("  " + paused_line(p) for p in paused),
    ]


def _degraded(snap: StatusSnapshot) -> list[str]:
    if not snap.degraded:
        return []
    lines = ["degraded:"]
    for owner in snap.degraded:
        lines.append(f"  {owner.owner_kind} {owner.owner_id}: {owner.reason}")
        lines += [f"    fix: {owner.retry_hint}"] if owner.retry_hint else []
    return lines


def _memory(snap: StatusSnapshot) -> list[str]:
    mem = snap.memory
    line = f"memory: rss {_mib(mem.rss_bytes)}"
    if mem.limit_bytes:
        line += f" of {_mib(mem.limit_bytes)}"
    else:
        line += " (no limit found: cgroup or gateway.memory.limit_mb)"
    if isinstance(mem.ratio, int | float):
        line += f" ({mem.ratio:.0%})"
    if mem.shedding:
        line += ", SHEDDING new turns"
    return [line + f", {mem.evictions} warm sessions evicted"]


def _event_loop(snap: StatusSnapshot) -> list[str]:
    loop = snap.event_loop
    if loop is None:
        return []
    health = "" if loop.healthy else ", UNHEALTHY"
    return [
        f"event loop: {loop.implementation}, lag {loop.lag_s:.3f} s "
        f"(limit {loop.max_lag_s} s){health}"
    ]


def _warnings(snap: StatusSnapshot) -> list[str]:
    return [f"warning: {warning}" for warning in snap.warnings]


PARTS: tuple[Callable[[StatusSnapshot], list[str]], ...] = (
    _head, _channels, _cluster, _breaker, _agents, _counts,
    _jobs, _paused, _degraded, _memory, _event_loop, _warnings,
)  # fmt: skip


def mcp_lines(servers: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each MCP server of a status answer: state, tools, restarts and why it is down."""
    return server_lines([McpServerView.from_json(server) for server in servers])


def server_lines(servers: Sequence[McpServerView]) -> list[str]:
    lines = []
    for server in servers:
        restarts = f", {server.restarts} restarts" if server.restarts else ""
        lines.append(
            f"mcp server {server.name} ({server.transport}): "
            f"{server.state}, {len(server.tools)} tools{restarts}"
        )
        if server.tools:
            lines.append(f"    tools: {', '.join(server.tools)}")
        if server.error:
            lines.append(f"    why: {server.error}")
    return lines


def _known(value: object) -> str:
    """A count read from the state store, or "?" while the store was unavailable."""
    return "?" if value is None else str(value)
