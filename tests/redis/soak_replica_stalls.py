"""Real `chatgate run` replicas on a private redis-server, one fake Telegram token.

First the Telegram lease holder freezes (SIGSTOP, like a long GC pause or a frozen VM) for twice
the lease TTL, shorter than the turn-lock TTL, mid-burst: another replica takes the token over
and adopts the frozen one's messages; when the frozen one resumes it must not send what it no
longer owns. Then Redis restarts with its data lost: the old holder still trusts its grant, and
the fence keeps every standby from polling until that grant has run out. Throughout, every
message is answered, a reply repeats only if it was sent right before the freeze (its DONE mark
unwritten), nothing is dead-lettered, the token never has two pollers and no session two turns
at the model at once. (One test, so the replicas start once.)
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.channels.telegram.support import telegram_config
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.redis.conftest import PrivateRedis
from tests.redis.replicas_support import PREFIX, owner, session_of, warnings
from tests.support.waiting import eventually

# Not collected by `make test` (the file name does not match test_*.py): about a minute, and a
# stall can still repeat a reply (see docs/replicas.md). `make soak` runs it by path.
pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 2.0
LOCK_TTL_S = 8.0  # longer than the stall: the frozen replica's turns keep their sessions
USERS, PER_USER = 8, 3


async def test_a_frozen_lease_holder_then_a_wiped_redis_lose_no_reply_and_never_two_pollers(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    fake_llm.latency_s = 0.2
    fake_llm.default_reply = lambda r: f"re: {r.last_user_text}"
    fake_llm.group_of = session_of
    client = Redis.from_url(private_redis.url, decode_responses=True)
    daemons: dict[str, Daemon] = {}
    for name in ("r1", "r2"):
        gateway = (
            f"  store: {{backend: redis, url: '{private_redis.url}', key_prefix: '{PREFIX}'}}\n"
            f"  turn_lock: {{backend: redis, ttl_s: {LOCK_TTL_S}}}\n"
            f"  redis: {{replica_id: {name}, lease_ttl_s: {LEASE_TTL_S}}}\n"
            "  rate_limits: {per_sender: null, per_chat: null}\n"
        )
        path = telegram_config(
            tmp_path / name, fake_tg, fake_llm, gateway=gateway, channel="    dm_policy: open"
        )
        daemons[name] = await Daemon(path).start(timeout=60)
    frozen: Daemon | None = None
    try:
        await eventually(lambda: owner(client), 20, "a telegram owner")
        first = await owner(client)
        assert first in daemons
        for i in range(PER_USER):
            for user in range(1, USERS + 1):
                fake_tg.dm(user, f"u{user} m{i}")
        await fake_tg.wait_for("sendMessage", count=USERS // 2, timeout=60)
        frozen = daemons[first]
        assert frozen.proc is not None
        frozen.proc.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        # Requests the frozen owner had already written land a moment later; no other replica
        # can send before its lease runs out.
        await asyncio.sleep(LEASE_TTL_S / 4)
        sent_before = {c.params["text"] for c in fake_tg.calls_of("sendMessage")}

        async def moved() -> bool:
            return (await owner(client)) not in (None, first)

        await eventually(moved, LEASE_TTL_S * 5, "another replica polling")
        takeover_s = time.monotonic() - stopped
        await asyncio.sleep(max(0.0, 2 * LEASE_TTL_S - takeover_s))
        frozen.proc.send_signal(signal.SIGCONT)
        frozen = None
        total = USERS * PER_USER
        expected = {f"re: u{u} m{i}" for u in range(1, USERS + 1) for i in range(PER_USER)}

        async def all_answered() -> bool:
            return expected <= {c.params["text"] for c in fake_tg.calls_of("sendMessage")}

        await eventually(all_answered, 90, f"all {total} answers")
        await asyncio.sleep(LEASE_TTL_S * 2)  # a late duplicate from the resumed one shows here
        texts = Counter(c.params["text"] for c in fake_tg.calls_of("sendMessage"))
        dead = await client.hgetall(PREFIX + "dlq")
        assert not dead, f"answers dead-lettered: {dead}\n{warnings(daemons)}"

        private_redis.kill()  # restarts with its data lost
        for leftover in private_redis.directory.rglob("*.aof*"):
            if leftover.is_file():
                leftover.unlink()
        private_redis.start()  # empty, and no fence key: the next take is fenced
        await client.aclose()
        client = Redis.from_url(private_redis.url, decode_responses=True)
        await eventually(lambda: owner(client), LEASE_TTL_S * 10, "a telegram owner after the wipe")
        fake_tg.dm(1, "u1 after")
        await fake_tg.wait_for("sendMessage", count=sum(texts.values()) + 1, timeout=60)
        again = [t for t, n in texts.items() if n > 1]
        assert all(texts[t] == 2 and t in sent_before for t in again), (
            f"duplicated: {again}\n{warnings(daemons)}"
        )
        assert max(fake_llm.max_in_flight_by.values()) == 1, "two turns of one session at once"
        assert fake_tg.max_in_flight["getupdates"] == 1, "two pollers on one token"
        # the holder froze right after a renewal at worst: takeover within the TTL (0.77 T)
        # plus the poll of the test itself; generous on a loaded machine
        assert takeover_s < LEASE_TTL_S * 2, f"takeover took {takeover_s / LEASE_TTL_S:.2f} TTL"
        print(
            f"stall: {len(again)} duplicates, 0 lost, takeover {takeover_s / LEASE_TTL_S:.2f} TTL"
        )
    finally:
        if frozen is not None and frozen.proc is not None:
            frozen.proc.send_signal(signal.SIGCONT)
        for daemon in daemons.values():
            if daemon.proc is not None and daemon.proc.returncode is None:
                await daemon.terminate(timeout=60)  # a drain under load
        await client.aclose()
