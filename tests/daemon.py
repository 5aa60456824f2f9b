"""Run the real `chatgate run` as a subprocess (for crash, signal and CLI tests)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import aiohttp

from chatgate.channels.signatures import sign

ROOT = Path(__file__).resolve().parent.parent


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(
        {
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_OFFLINE_MODE": "true",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.pop("OPENAI_API_KEY", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a daemon caches what it compiles for the next one
    env.pop("WEBHOOK_SECRET", None)
    env.update(extra or {})
    return env


LIVE: list[asyncio.subprocess.Process] = []


def kill_leftovers() -> None:
    """Called after every test: a daemon a failed test did not stop must not outlive it."""
    while LIVE:
        proc = LIVE.pop()
        if proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass


async def reap_leftovers() -> None:
    """`kill_leftovers`, and wait until each has exited: none of them writes anything after."""
    procs = list(LIVE)
    kill_leftovers()
    for proc in procs:
        await proc.wait()


class Daemon:
    def __init__(
        self, config: Path, *, env: Mapping[str, str] | None = None, log_name: str = "daemon.log"
    ) -> None:
        self.config = config
        self.env = cli_env(env)
        self.log_path = config.parent / log_name
        self.proc: asyncio.subprocess.Process | None = None
        self.port: int | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, timeout: float = 120.0) -> Daemon:
        log = self.log_path.open("ab")
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "chatgate",
            "run",
            "--config",
            str(self.config),
            "--log-format",
            "json",
            cwd=str(self.config.parent),
            env=self.env,
            stdout=log,
            stderr=log,
        )
        log.close()
        LIVE.append(self.proc)
        deadline = asyncio.get_running_loop().time() + timeout
        while self.port is None:
            if self.proc.returncode is not None:
                raise AssertionError(f"daemon exited {self.proc.returncode}:\n{self.logs()}")
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"daemon not ready in {timeout}s:\n{self.logs()}")
            for line in self.logs().splitlines():
                if '"chatgate ready"' in line:
                    self.port = int(json.loads(line)["port"])
            await asyncio.sleep(0.05)
        return self

    def logs(self) -> str:
        return (
            self.log_path.read_text(encoding="utf-8", errors="replace")
            if self.log_path.exists()
            else ""
        )

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)

    # The default timeouts guard against a hang; a loaded box takes 20 s to stop a daemon and a
    # minute to start one (litellm's import alone is ~4 CPU s). A test proving a bound passes its own.
    async def terminate(self, timeout: float = 60.0) -> int:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.proc.wait(), timeout)

    async def wait(self, timeout: float = 60.0) -> int:
        assert self.proc is not None
        return await asyncio.wait_for(self.proc.wait(), timeout)

    async def get(self, path: str, **kwargs: object) -> tuple[int, str]:
        async with (
            aiohttp.ClientSession() as session,
            session.get(self.base + path, **kwargs) as resp,
        ):  # type: ignore[arg-type]
            return resp.status, await resp.text()


async def run_cli(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "chatgate",
        *args,
        env=cli_env(env),
        cwd=str(cwd or ROOT),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


def jobs_route(secret: str) -> str:
    """gateway.yaml lines for the ``/hooks/jobs`` route that ``post_signed_job`` posts to."""
    return f"""channels:
  webhook:
    routes:
      jobs:
        path: /hooks/jobs
        secret: {secret}
        prompt: "{{payload.text}}"
        session: "{{payload.user}}"
"""


async def post_signed_job(
    base: str, secret: str, text: str, delivery: str, user: str = "ada"
) -> tuple[int, dict[str, str]]:
    """POST {"text", "user"} to the ``/hooks/jobs`` route, signed the generic way."""
    body = json.dumps({"text": text, "user": user}).encode()
    headers = {"Content-Type": "application/json", "X-Request-Id": delivery}
    headers.update(sign("generic", secret, body, time.time()))
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{base}/hooks/jobs", data=body, headers=headers) as r,
    ):
        return r.status, await r.json()
