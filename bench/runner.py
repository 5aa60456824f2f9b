"""What every scenario gets (run options, a scratch directory, an HTTP client) and returns."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.stats import Table


@dataclass
class Context:
    """Run-wide options and shared resources."""

    quick: bool
    reps: int
    workdir: Path
    http: aiohttp.ClientSession
    shared: contextlib.AsyncExitStack
    telegram_dms: int = 600
    cache: dict[str, Any] = field(default_factory=dict)

    def scratch(self, name: str) -> Path:
        path = self.workdir / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def pick(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    def settle(self, seconds: float) -> float:
        """How long to let a process settle before sampling it (shorter with --quick)."""
        return seconds * 0.3 if self.quick else seconds


@dataclass
class Outcome:
    """A scenario's rows plus the parameters it ran with and anything else worth keeping."""

    table: Table
    params: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


Scenario = Callable[[Context], Awaitable[Outcome]]


@contextlib.asynccontextmanager
async def http_client() -> AsyncIterator[aiohttp.ClientSession]:
    """The bench process's own client: loopback only, no proxies from the environment."""
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:
        yield session
