"""Storms: a refusing Bot API, several channels failing at once, revoked tokens, stalls and reloads."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import aiohttp

from chatgate.gateway.supervision.supervised import ChannelStatus
from chatgate.policies.channel_states import ChannelState
from tests.channels.telegram.helpers_b import key_of, settled
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import TOKEN, FakeTelegram, FaultSpec
from tests.harness import operator, running, url, write_config
from tests.support.waiting import eventually

PING_ROUTE = """  webhook:
    routes:
      ping: {path: /hooks/ping, signature: none, prompt: "{payload.text}"}
"""


def config(
    tmp_path: Path,
    tg: FakeTelegram,
    llm: FakeLLM,
    *,
    bots: int = 1,
    telegram: str = "",
    gateway: str = "",
) -> Path:
    base = tg.base_url.removesuffix("/bot")
    sections = [
        f'  telegram: {{token: "{TOKEN}", api_base: "{base}", poll_timeout_s: 1, dm_policy: open{telegram}}}'
    ]
    sections += [
        f'  tg{i}: {{type: telegram, token: "{TOKEN}", api_base: "{base}", poll_timeout_s: 1}}'
        for i in range(2, bots + 1)
    ]
    return write_config(
        tmp_path,
        f"""{gateway}
agents:
  default: {{backend: litellm, model: openai/fake-model, api_base: "{llm.base_url}", api_key: sk-x}}
channels:
{chr(10).join(sections)}
{PING_ROUTE}""",
    )


async def ping(gw: object, text: str) -> str:
    async with (
        aiohttp.ClientSession() as http,
        http.post(url(gw, "/hooks/ping"), json={"text": text}) as resp,
    ):  # type: ignore[arg-type]
        assert resp.status == 200
        return str((await resp.json())["reply"])


async def restarted_after(clock: ManualClock, status: ChannelStatus, delay: float) -> None:
    """Advance ``clock`` past a channel's backoff of ``delay`` until its restart is counted.

    The test sees BACKOFF before the supervisor's sleep is on the clock (it starts on the
    supervisor's next step): an advance made in between is missed, so it is made again."""
    restarts = status.restarts

    def restarted() -> bool:
        if status.state is ChannelState.BACKOFF and status.restarts == restarts:
            clock.advance(delay + 0.01)
        return status.restarts > restarts

    await eventually(restarted, 60, "the restart")


async def test_refusing_bot_api_backs_off_exponentially_parks_and_bounds_attempts(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_tg.refuse_connections = True
    clock = ManualClock()
    async with running(config(tmp_path, fake_tg, fake_llm), clock=clock) as gw:
        status = gw.channels.statuses["telegram"]
        intervals: list[float] = []
        while True:
            restarts = status.restarts
            await eventually(
                lambda: (
                    status.state is ChannelState.PARKED
                    or (status.state is ChannelState.BACKOFF and status.next_retry_at is not None)
                ),
                60,
                "backoff or parked",
            )
            if status.state is ChannelState.PARKED:
                break
            delay = status.next_retry_at - clock.time()  # type: ignore[operator]
            intervals.append(delay)
            await restarted_after(clock, status, delay)
            assert status.restarts == restarts + 1
            assert (
                await ping(gw, f"during storm {len(intervals)}")
                == f"echo: during storm {len(intervals)}"
            )
        attempts = fake_tg.refused_requests
        clock.advance(3600)
        await asyncio.sleep(0.3)
        assert fake_tg.refused_requests == attempts  # parked means parked: no more attempts
        snapshot = {c["name"]: c for c in gw.channels.snapshot()}["telegram"]

        fake_tg.refuse_connections = False  # the operator fixed the cause and un-parks it
        async with aiohttp.ClientSession() as http:
            async with http.post(
                url(gw, "/api/channels/telegram/restart"), headers=operator(gw)
            ) as resp:
                assert resp.status == 200
            async with http.post(
                url(gw, "/api/channels/nope/restart"), headers=operator(gw)
            ) as resp:
                assert resp.status == 404
        await eventually(lambda: status.state is ChannelState.RUNNING, what="un-parked")
        assert gw.degraded.owners() == []
    assert len(intervals) == 10  # the per-channel budget: 10 restarts per hour
    assert all(later > earlier for earlier, later in itertools.pairwise(intervals[:7]))
    assert 0.8 <= intervals[0] <= 1.2 and max(intervals) <= 60 * 1.2
    assert attempts == 11  # the first start plus 10 restarts, all counted at the fake
    assert snapshot["state"] == "parked" and "restart budget exhausted" in snapshot["error"]
    assert "chatgate channels restart telegram" in snapshot["hint"]


async def test_fleet_breaker_holds_restarts_then_rearms_and_channels_recover(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_tg.refuse_connections = True
    clock = ManualClock()
    path = config(
        tmp_path, fake_tg, fake_llm, bots=3, gateway="  supervision: {breaker_cooldown_s: 120}"
    )
    async with running(path, clock=clock) as gw:
        names = ["telegram", "tg2", "tg3"]
        statuses = [gw.channels.statuses[n] for n in names]
        await eventually(
            lambda: all(s.state is ChannelState.BACKOFF for s in statuses), what="all failing"
        )
        await eventually(lambda: gw.channels.breaker_status()["tripped"], what="breaker tripped")
        status = await gw.status()
        assert status["breaker"]["tripped"] is True
        assert [d["owner_kind"] for d in status["degraded"]] == ["gateway"]
        held = fake_tg.refused_requests
        for _ in range(6):  # 60 s of the 120 s cooldown: nothing may reconnect
            clock.advance(10)
            await asyncio.sleep(0.05)
        assert fake_tg.refused_requests == held
        assert await ping(gw, "webhooks still work") == "echo: webhooks still work"

        fake_tg.refuse_connections = False  # the shared dependency heals

        def healed() -> bool:
            """Clock time passes only while a channel waits on it (the breaker, its backoff);
            a restart under way takes what real time it needs."""
            if any(s.state is ChannelState.BACKOFF for s in statuses):
                clock.advance(5)
            return all(s.state is ChannelState.RUNNING for s in statuses)

        await eventually(healed, 60, "every channel running again")
        assert not gw.channels.breaker_status()["tripped"]
        assert gw.degraded.owners() == []
        fake_tg.dm(42, "hello after the storm")
        await fake_tg.wait_for("sendMessage", timeout=10)


async def test_token_revoked_at_runtime_parks_immediately_without_retries(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    async with running(config(tmp_path, fake_tg, fake_llm)) as gw:
        status = gw.channels.statuses["telegram"]
        assert status.state is ChannelState.RUNNING
        fake_tg.revoke_token()
        await eventually(lambda: status.state is ChannelState.PARKED, what="parked")
        calls = len(fake_tg.calls)
        await asyncio.sleep(1.5)
        assert len(fake_tg.calls) == calls  # no retry storm against a revoked token
        assert status.restarts == 0
        assert "BotFather" in status.hint
        assert await ping(gw, "others unaffected") == "echo: others unaffected"


async def test_stalled_and_unreachable_telegram_is_restarted_through_the_ladder(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    clock = ManualClock()
    path = config(
        tmp_path,
        fake_tg,
        fake_llm,
        telegram=", stale_after_s: 0.5",
        gateway="  supervision: {stall_check_s: 5}",
    )
    async with running(path, clock=clock) as gw:
        status = gw.channels.statuses["telegram"]
        await fake_tg.wait_for("getUpdates", timeout=10)
        fake_tg.stall_get_updates = True
        fake_tg.fail(
            "getMe", FaultSpec(502, "Bad Gateway"), times=1
        )  # the liveness probe fails once
        await asyncio.sleep(1.0)  # idle longer than stale_after_s (real time: the adapter's clock)
        clock.advance(5)  # the supervisor's stall check runs
        await eventually(lambda: status.state is ChannelState.BACKOFF, what="stall detected")
        assert "stalled" in status.error and "liveness probe failed" in status.error
        fake_tg.stall_get_updates = False
        await restarted_after(clock, status, status.next_retry_at - clock.time())  # type: ignore[operator]
        await eventually(lambda: status.state is ChannelState.RUNNING, 60, "running again")
        assert status.restarts == 1
        fake_tg.dm(42, "back?")
        [reply] = await fake_tg.wait_for("sendMessage", timeout=10)
    assert reply.params["text"] == "echo: back?"


async def test_reload_with_a_new_allowlist_applies_without_restarting_the_channel(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    path = config(
        tmp_path, fake_tg, fake_llm, telegram=", dm_policy: allowlist, allowed_users: [41]"
    )
    path.write_text(path.read_text().replace("dm_policy: open, ", ""))
    async with running(path) as gw:
        refused = await settled(gw, key_of(fake_tg.dm(43, "let me in")))
        assert refused.stage == "admission"
        assert fake_tg.calls_of("sendMessage") == []
        get_me = len(fake_tg.calls_of("getMe"))
        path.write_text(path.read_text().replace("allowed_users: [41]", "allowed_users: [41, 43]"))
        result = await gw.reload()
        assert (
            result["ok"]
            and result["restarted_channels"] == []
            and "telegram" in result["reconfigured_channels"]
        )
        fake_tg.dm(43, "now?")
        [reply] = await fake_tg.wait_for("sendMessage", timeout=10)
        assert len(fake_tg.calls_of("getMe")) == get_me  # the channel was not restarted
        assert gw.channels.statuses["telegram"].restarts == 0

        path.write_text(path.read_text().replace("channels:", "channels:\n  nonsense_key: 1", 1))
        rejected = await gw.reload()
        assert not rejected["ok"] and "nonsense_key" in rejected["error"]
        fake_tg.dm(43, "still?")
        await fake_tg.wait_for("sendMessage", count=2, timeout=10)
    assert reply.params["text"] == "echo: now?"
