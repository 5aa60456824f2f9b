"""Helpers shared by the suites that run real `chatgate run` replicas on one Redis with one fake
Telegram token and one fake model (tests/redis/test_replicas.py, test_replica_faults.py and the
soak file)."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from redis.asyncio import Redis

from chatgate.model.text_ids import TextId
from chatgate.texts.voice import Voice
from tests.channels.telegram.support import telegram_config
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM, RecordedRequest
from tests.fakes.telegram import FakeTelegram
from tests.harness import over_http

PREFIX = "mr:"
STATE_AWAY = Voice().text(TextId.STATE_AWAY)


def session_of(request: RecordedRequest) -> str:
    """The fake model's grouping: the user a message text names ("u3 m1" → "u3")."""
    return (request.last_user_text or "?").split()[0]


async def owner(client: Redis) -> str | None:
    """The replica holding the Telegram polling lease, if any."""
    keys = await client.keys(PREFIX + "lease:telegram:*")
    value = await client.get(keys[0]) if keys else None
    return None if value is None else str(value)


def warnings(daemons: dict[str, Daemon]) -> str:
    """The replicas' warnings and errors, to tell what happened when an assertion fails."""
    return "\n".join(
        f"{name}: {line[:300]}"
        for name, daemon in daemons.items()
        for line in daemon.logs().splitlines()
        if '"warning"' in line or '"error"' in line
        if "pairing notifier" not in line
    )


def redis_lines(url: str, name: str, lease_ttl_s: float) -> str:
    """The `gateway:` lines of an in-process replica `name` on Redis `url` (default prefix)."""
    return (
        f"  store: {{backend: redis, url: '{url}'}}\n"
        "  turn_lock: {backend: redis}\n"
        f"  redis: {{replica_id: {name}, lease_ttl_s: {lease_ttl_s}}}\n"
    )


def replica_gateway(url: str, name: str, lease_ttl_s: float, lock_ttl_s: float) -> str:
    """The `gateway:` lines of one replica (no rate limits: a burst is the point)."""
    return (
        f"  store: {{backend: redis, url: '{url}', key_prefix: '{PREFIX}'}}\n"
        f"  turn_lock: {{backend: redis, ttl_s: {lock_ttl_s}}}\n"
        f"  redis: {{replica_id: {name}, lease_ttl_s: {lease_ttl_s}}}\n"
        "  rate_limits: {per_sender: null, per_chat: null}\n"
    )


async def start_telegram_replicas(
    tmp_path: Path,
    tg: FakeTelegram,
    llm: FakeLLM,
    urls: dict[str, str],
    *,
    lease_ttl_s: float,
    lock_ttl_s: float,
    extra: str = "",
    litellm: bool = False,
) -> dict[str, Daemon]:
    """One open-DM Telegram replica per name (each on its Redis URL), started side by side;
    ``extra``: more `channels:` entries (indented by two). The model is reached through the
    http agent backend unless ``litellm`` (a replica start then skips litellm's ~5 CPU s)."""
    daemons = {
        name: Daemon(
            telegram_config(
                tmp_path / name,
                tg,
                llm if litellm else over_http(llm),
                gateway=replica_gateway(url, name, lease_ttl_s, lock_ttl_s),
                channel="    dm_policy: open\n" + extra,
                api_key=f"sk-{name}",  # tells the fake model which replica asked
            )
        )
        for name, url in urls.items()
    }
    await asyncio.gather(*(d.start(timeout=60) for d in daemons.values()))
    return daemons


async def stop_all(daemons: dict[str, Daemon], *, kill: bool = False, timeout: float = 60) -> None:
    """SIGTERM every replica still running and wait for its drain (``kill``: SIGKILL, when the
    test has asserted what it wanted and the drain would only cost time)."""
    running = [d for d in daemons.values() if d.proc is not None and d.proc.returncode is None]
    if kill:
        for daemon in running:
            daemon.kill9()
        await asyncio.gather(*(d.wait(timeout=timeout) for d in running))
        return
    await asyncio.gather(*(d.terminate(timeout=timeout) for d in running))


def echo_replies(llm: FakeLLM) -> None:
    """The fake model answers "re: <text>" and counts concurrency per user."""
    llm.default_reply = lambda r: f"re: {r.last_user_text}"
    llm.group_of = session_of


def replica_of(request: RecordedRequest) -> str:
    """Which replica sent a model request (each has its own API key, ``sk-<name>``)."""
    return request.headers.get("authorization", "").removeprefix("Bearer sk-")


def sent_texts(tg: FakeTelegram) -> Counter[str]:
    """The answers sent, with how often each went (the notice that an answer waits for the
    state to be back is not one)."""
    return Counter(
        c.params["text"] for c in tg.calls_of("sendMessage") if c.params["text"] != STATE_AWAY
    )
