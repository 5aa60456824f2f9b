"""Child processes of a benchmark run: the daemon, the fake model server and the floors.

Every child logs to its own file in the run directory, is found on 127.0.0.1 only, and is always
stopped (SIGTERM, then SIGKILL after a bounded wait) when its context exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
POLL_S = 0.01
_SCRUBBED = ("OPENAI_API_KEY", "WEBHOOK_SECRET", "TELEGRAM_BOT_TOKEN", "CHATGATE_CONFIG")


class BenchError(RuntimeError):
    """A scenario could not be measured (a child died, a wait timed out, replies went missing)."""


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every child: offline litellm, no proxies, no real secrets."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy") and k not in _SCRUBBED
    }
    env.update(
        {
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_OFFLINE_MODE": "true",
            "NO_PROXY": "127.0.0.1,localhost",
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(ROOT),
        }
    )
    env.update(extra or {})
    return env


def free_port() -> int:
    """A loopback port that was free a moment ago (the child binds it right after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` (all its threads) so far, from /proc/<pid>/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    # The command name (field 2) may contain spaces; the fields after its ")" are fixed.
    fields = stat.rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def rss(pid: int) -> dict[str, int]:
    """RssAnon and VmRSS of ``pid`` in bytes, from /proc/<pid>/status."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        name, _, rest = line.partition(":")
        if name in ("RssAnon", "VmRSS"):
            out[name] = int(rest.split()[0]) * 1024
    return out


class Proc:
    """One child process with its output in ``log_path``."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        *,
        cwd: Path = ROOT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.cwd = cwd
        self.env = child_env(env)
        self.proc: asyncio.subprocess.Process | None = None
        self.spawned_at = 0.0

    @property
    def pid(self) -> int:
        if self.proc is None:
            raise BenchError(f"{self.name} was not started")
        return self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.spawned_at = time.monotonic()
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, cwd=str(self.cwd), env=self.env, stdout=log, stderr=log
            )

    def send(self, signum: signal.Signals) -> None:
        if self.running and self.proc is not None:
            self.proc.send_signal(signum)

    async def stop(self, grace_s: float = 15.0) -> int | None:
        """SIGTERM, wait up to ``grace_s``, then SIGKILL; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), grace_s)
            except TimeoutError:
                self.proc.kill()
                await asyncio.wait_for(self.proc.wait(), 5.0)
        return self.proc.returncode

    def logs(self) -> str:
        if not self.log_path.exists():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def tail(self, lines: int = 25) -> str:
        return "\n".join(self.logs().splitlines()[-lines:])

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.returncode is not None:
            raise BenchError(
                f"{self.name} exited with {self.proc.returncode}; log tail:\n{self.tail()}"
            )


P = TypeVar("P", bound="Proc")


@contextlib.asynccontextmanager
async def started(proc: P) -> AsyncIterator[P]:
    """Start ``proc`` and always stop it on exit."""
    try:
        await proc.start()
        yield proc
    finally:
        await proc.stop()


@contextlib.asynccontextmanager
async def all_started(*procs: Proc) -> AsyncIterator[None]:
    """Start ``procs`` in order; on exit stop them all at once (shutdowns overlap)."""
    try:
        for proc in procs:
            await proc.start()
        yield
    finally:
        await asyncio.gather(*(proc.stop() for proc in procs))


Predicate = Callable[[], bool | Awaitable[bool]]


async def wait_until(
    predicate: Predicate,
    within_s: float,
    what: str,
    *,
    procs: Sequence[Proc] = (),
    interval: float = POLL_S,
) -> float:
    """Poll ``predicate`` until true; returns the time.monotonic() when it first held.

    Raises BenchError after ``within_s`` seconds or as soon as one of ``procs`` has died.
    """
    deadline = time.monotonic() + within_s
    while True:
        result = predicate()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return time.monotonic()
        for proc in procs:
            proc.check_alive()
        if time.monotonic() > deadline:
            tails = "".join(f"\n--- {p.name} ---\n{p.tail()}" for p in procs)
            raise BenchError(f"{what}: not within {within_s:.0f} s{tails}")
        await asyncio.sleep(interval)


async def http_status(session: aiohttp.ClientSession, url: str) -> int | None:
    """The status of a GET, or None when nothing answers yet."""
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=2.0)) as resp:
            await resp.read()
            return resp.status
    except (aiohttp.ClientError, TimeoutError, OSError):
        return None


def daemon(
    config: Path, log_name: str = "daemon.log", env: Mapping[str, str] | None = None
) -> Proc:
    """`chatgate run` on ``config`` with JSON logs, run from the config's directory."""
    argv = [PYTHON, "-m", "chatgate", "run", "--config", str(config), "--log-format", "json"]
    return Proc("chatgate", argv, config.parent / log_name, cwd=config.parent, env=env)


async def wait_ready(
    session: aiohttp.ClientSession, proc: Proc, port: int, within_s: float = 60.0
) -> float:
    """Poll /readyz until 200; returns the monotonic time it first answered 200."""

    async def ready() -> bool:
        return await http_status(session, f"http://127.0.0.1:{port}/readyz") == 200

    return await wait_until(ready, within_s, f"{proc.name} /readyz", procs=[proc])


class AnnouncedProc(Proc):
    """A child that prints ``READY <port>`` once it listens; ``start`` waits for that line."""

    ready_timeout_s = 60.0

    def __init__(self, name: str, argv: Sequence[str], log_path: Path) -> None:
        super().__init__(name, argv, log_path)
        self.port = 0
        self.ready_at = 0.0  # monotonic time the READY line was seen

    async def start(self) -> None:
        await super().start()

        def announced() -> bool:
            for line in self.logs().splitlines():
                if line.startswith("READY "):
                    self.port = int(line.split()[1])
                    return True
            return False

        self.ready_at = await wait_until(
            announced, self.ready_timeout_s, f"{self.name} READY line", procs=[self]
        )


class FakeLLMProc(AnnouncedProc):
    """``python -m tests.fakes.llm`` in its own process (answers "echo: <last user text>")."""

    def __init__(self, log_path: Path, latency_s: float = 0.0) -> None:
        argv = [PYTHON, "-m", "tests.fakes.llm", "--port", "0", "--latency", str(latency_s)]
        super().__init__("fake-llm", argv, log_path)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def configure(self, session: aiohttp.ClientSession, latency_s: float) -> None:
        url = f"http://127.0.0.1:{self.port}/_fake/config"
        async with session.post(url, json={"latency_s": latency_s}) as resp:
            if resp.status != 200:
                raise BenchError(f"fake LLM config failed: {resp.status} {await resp.text()}")

    async def reset(self, session: aiohttp.ClientSession) -> None:
        """Forget recorded requests and restart the peak in-flight counter."""
        async with session.post(f"http://127.0.0.1:{self.port}/_fake/reset") as resp:
            if resp.status != 200:
                raise BenchError(f"fake LLM reset failed: {resp.status}")

    async def stats(self, session: aiohttp.ClientSession) -> dict[str, int]:
        """``requests``, ``in_flight`` and ``max_in_flight`` (model calls) since the last reset."""
        async with session.get(f"http://127.0.0.1:{self.port}/_fake/stats") as resp:
            data: dict[str, int] = await resp.json()
            return data
