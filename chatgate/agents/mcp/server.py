"""One MCP server through the official `mcp` SDK: started on first use, restarted after a crash.

A single owner task holds the SDK's transport and session contexts (anyio wants them entered
and left in one task). Calls run from turns; a call that loses the connection marks the session
broken, the owner restarts it on a jittered backoff within the server's hourly budget, and the
server is parked (its tools gone, with the reason) when the budget is spent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from chatgate.agents.mcp.stderr import StderrTail, wrapped
from chatgate.agents.tools.types import ToolOutcome, ToolSpec, ToolUnavailable
from chatgate.clock import Clock
from chatgate.config.base import secret_value
from chatgate.config.secrets import is_secret_env
from chatgate.config.tool_models import McpServerConfig
from chatgate.policies.supervision import RestartBudget, backoff_delay
from chatgate.policies.taint import ToolHints

log = logging.getLogger(__name__)

PING_INTERVAL_S = 15.0  # an idle server's liveness check


class ServerState(StrEnum):
    IDLE = "idle"  # configured, not needed yet
    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"  # crashed; waiting out the backoff
    PARKED = "parked"  # restart budget spent or not startable; tools withdrawn
    STOPPED = "stopped"


@dataclass(frozen=True)
class ServerStatus:
    name: str
    transport: str
    state: ServerState
    tools: tuple[str, ...]
    restarts: int
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "state": self.state.value,
            "tools": list(self.tools),
            "restarts": self.restarts,
            "error": self.error,
        }


class McpServer:
    """A configured MCP server; ``tools()`` starts it lazily, ``call`` runs one tool on it."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        clock: Clock,
        *,
        rng: random.Random | None = None,
        ping_interval_s: float = PING_INTERVAL_S,
    ) -> None:
        self.name = name
        self._config = config
        self._clock = clock
        self._rng = rng or random.Random()
        self._ping_interval_s = ping_interval_s
        self._budget = RestartBudget(config.restart_budget_per_hour)
        self.state = ServerState.IDLE
        self.error = ""
        self.restarts = 0
        self._tools: tuple[ToolSpec, ...] = ()
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()  # set when READY, PARKED or STOPPED (waiters stop waiting)
        self._broken = asyncio.Event()
        self._stderr: StderrTail | None = None  # the current stdio process's stderr

    # -- reading ------------------------------------------------------------------------------

    def status(self) -> ServerStatus:
        return ServerStatus(
            self.name,
            self._config.transport,
            self.state,
            tuple(t.name for t in self._tools),
            self.restarts,
            self.error,
        )

    def secrets(self) -> list[str]:
        values = [*self._config.env.values(), *self._config.headers.values()]
        found = [v for v in (secret_value(s) for s in values) if v]
        passed = self._passed_through()
        return found + [v for k, v in passed.items() if v and is_secret_env(k)]

    def _passed_through(self) -> dict[str, str]:
        """The daemon's variables named in ``env_passthrough`` (those that are set)."""
        return {k: os.environ[k] for k in self._config.env_passthrough if k in os.environ}

    def _env(self) -> dict[str, str]:
        """What the server gets on top of the SDK's safe default set (HOME, LOGNAME, PATH,
        SHELL, TERM, USER): the names passed through, then ``env`` (which wins)."""
        configured = {k: secret_value(v) or "" for k, v in self._config.env.items()}
        return self._passed_through() | configured

    async def tools(self) -> Sequence[ToolSpec]:
        """The server's tools, starting it first if needed; empty while it is down."""
        if self.state in (ServerState.IDLE, ServerState.STOPPED) and self._task is None:
            self._start()
        if self.state is ServerState.STARTING:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._config.startup_timeout_s):
                    await self._ready.wait()
        return self._tools if self.state is ServerState.READY else ()

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Run ``tool`` (its name on the server, not namespaced)."""
        session = self._session
        if self.state is not ServerState.READY or session is None:
            raise ToolUnavailable(f"MCP server {self.name} is {self.state.value}")
        from mcp.shared.exceptions import MCPError
        from mcp_types.jsonrpc import CONNECTION_CLOSED

        try:
            result = await session.call_tool(tool, dict(arguments))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED:
                # An error answer (unknown tool, invalid params): the server is alive.
                return ToolOutcome(f"error: {exc.message}", is_error=True)
            why = "connection closed" if isinstance(exc, MCPError) else type(exc).__name__
            self._mark_broken(f"call failed: {why}")
            raise ToolUnavailable(f"MCP server {self.name} failed mid-call ({why})") from None
        return ToolOutcome(_result_text(result), bool(getattr(result, "is_error", False)))

    # -- lifecycle ----------------------------------------------------------------------------

    def _start(self) -> None:
        self.state = ServerState.STARTING
        self._ready.clear()
        self._task = asyncio.create_task(self._own(), name=f"mcp:{self.name}")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._set(ServerState.STOPPED, self.error)

    def _set(self, state: ServerState, error: str = "") -> None:
        if state is not ServerState.READY:
            self._tools = ()
            self._session = None
        self.state = state
        self.error = error
        if state is ServerState.STARTING:
            self._ready.clear()
        else:  # a failed attempt releases the waiters at once: the turn goes on without tools
            self._ready.set()

    def _mark_broken(self, why: str) -> None:
        """Withdraw the tools at once; the owner task notices and restarts the connection."""
        if self.state is ServerState.READY:
            self._set(ServerState.RESTARTING, why)
            self._broken.set()

    async def _own(self) -> None:
        """Start, serve until broken, then restart on the ladder or park."""
        while True:
            error = await self._serve_once()
            now = self._clock.monotonic()
            if not self._budget.allow(now):
                log.error("mcp server parked", extra={"server": self.name, "error": error})
                self._set(ServerState.PARKED, f"{error}; restart budget spent")
                return
            self._budget.record(now)
            self.restarts += 1
            delay = backoff_delay(self.restarts, self._rng, base_s=0.5, cap_s=30.0)
            log.warning(
                "mcp server restarting",
                extra={"server": self.name, "error": error, "delay_s": round(delay, 2)},
            )
            self._set(ServerState.RESTARTING, error)
            await self._clock.sleep(delay)
            self._set(ServerState.STARTING, error)

    async def _serve_once(self) -> str:
        """One connection's life; the operator-safe reason it ended."""
        from mcp.client.session import ClientSession

        self._broken = asyncio.Event()
        try:
            async with self._transport() as (read, write), ClientSession(read, write) as session:
                async with asyncio.timeout(self._config.startup_timeout_s):
                    await session.initialize()
                    listed = await session.list_tools()
                self._tools = tuple(_spec(self.name, tool) for tool in listed.tools)
                self._session = session
                self._set(ServerState.READY)
                log.info("mcp server ready", extra={"server": self.name, "tools": len(self._tools)})
                await self._watch(session)
                return self.error or "connection lost"
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            return f"no answer within startup_timeout_s={self._config.startup_timeout_s:g}"
        except Exception as exc:
            return self._ended() or _describe(exc)
        finally:
            self._session = None
            self._tools = ()

    def _ended(self) -> str:
        """How the last stdio process ended (exit status, last stderr lines), if it did."""
        return self._stderr.describe() if self._stderr is not None else ""

    async def _watch(self, session: Any) -> None:
        """Return once the connection is broken: a failed call or a failed ping."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._ping_interval_s):
                    await self._broken.wait()
                    return
            try:
                async with asyncio.timeout(self._config.startup_timeout_s):
                    await session.send_ping()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.error = f"ping failed: {_describe(exc)}"
                return

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        cfg = self._config
        if cfg.command is not None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            command, args = wrapped(cfg.command, list(cfg.args))
            params = StdioServerParameters(
                command=command, args=args, env=self._env() or None, cwd=cfg.cwd
            )
            self._stderr = tail = StderrTail(self.name)
            try:
                async with stdio_client(params, errlog=tail.file) as streams:
                    yield streams[0], streams[1]
            finally:
                await tail.close()
            return
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        assert cfg.url is not None
        headers = {k: secret_value(v) or "" for k, v in cfg.headers.items()}
        async with (
            create_mcp_http_client(headers=headers) as client,
            streamable_http_client(cfg.url, http_client=client) as streams,
        ):
            yield streams[0], streams[1]


def _spec(server: str, tool: Any) -> ToolSpec:
    schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)
    parameters = dict(schema) if isinstance(schema, Mapping) else {"type": "object"}
    parameters.setdefault("type", "object")
    hints = ToolHints.from_annotations(getattr(tool, "annotations", None))
    description = getattr(tool, "description", None) or ""
    return ToolSpec(f"{server}.{tool.name}", description, parameters, hints)


def _result_text(result: Any) -> str:
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(block, 'type', 'content')}]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        import json

        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    return "\n".join(parts)


def _describe(exc: BaseException) -> str:
    """A short cause without the exception text (which may carry a URL or header)."""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    if isinstance(exc, FileNotFoundError):
        return "command not found"
    return type(exc).__name__
