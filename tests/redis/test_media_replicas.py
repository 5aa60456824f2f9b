"""Redis mode: the replica that runs a turn fetches its files, whether or not it holds the
channel's exclusive connection (a file handle opens with the bot's credentials anywhere).

Two in-process replicas poll one fake Telegram token; the one running a photo's turn loses the
polling lease before the turn reaches its media step, so the photo is fetched on a standby
adapter (a fetch-only bot: getFile + download, no getUpdates) and the model still sees it.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.channels.descriptor import secret_lease
from chatgate.channels.telegram.adapter import TelegramChannel
from chatgate.gateway.app import Gateway
from chatgate.policies.channel_states import ChannelState
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.harness import running
from tests.media.samples import png
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis
TTL_S = 3.0  # long enough that a loaded machine does not lose leases by itself
LEASE_KEY = f"chatgate:lease:{secret_lease('telegram', TOKEN)}"


@contextlib.asynccontextmanager
async def replica(
    directory: Path, url: str, name: str, tg: FakeTelegram, llm: FakeLLM
) -> AsyncIterator[Gateway]:
    gateway = (
        f"  store: {{backend: redis, url: '{url}'}}\n"
        f"  turn_lock: {{backend: redis}}\n"
        f"  redis: {{replica_id: {name}, lease_ttl_s: {TTL_S}}}\n"
    )
    agent = "    media:\n      vision: true"
    path = telegram_config(
        directory, tg, llm, gateway=gateway, agent=agent, channel="    dm_policy: open"
    )
    async with running(path) as gw:
        yield gw


def state(gateway: Gateway) -> ChannelState:
    return gateway.channels.statuses["telegram"].state


def adapter(gateway: Gateway) -> TelegramChannel:
    found = gateway.channels.channels["telegram"].adapter
    assert isinstance(found, TelegramChannel)
    return found


def photo(file_id: str, size: int) -> list[dict[str, object]]:
    return [
        {"file_id": file_id, "file_unique_id": "u", "width": 32, "height": 24, "file_size": size}
    ]


async def test_a_replica_that_lost_the_polling_lease_still_fetches_the_photo_of_its_turn(
    tmp_path: Path, redis_db: str, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    image = png()
    fake_tg.files.add("ph-1", image, ext="png")
    client = Redis.from_url(redis_db, decode_responses=True)
    # the chat's turn lock is held elsewhere: the photo's turn waits for it on a (a waiting
    # session queue would go along with a hand-off; a turn waiting for its lock stays)
    lock_key = "chatgate:lock:default:telegram:42"
    await client.set(lock_key, "elsewhere/held", px=60_000)
    try:
        async with replica(tmp_path / "a", redis_db, "a", fake_tg, fake_llm) as a:
            await eventually(lambda: state(a) is ChannelState.RUNNING, 20, "a polls")
            async with replica(tmp_path / "b", redis_db, "b", fake_tg, fake_llm) as b:
                await eventually(lambda: state(b) is ChannelState.STANDBY, 20, "b in standby")
                fake_tg.media_message(42, "photo", photo("ph-1", len(image)), caption="what?")

                async def journaled() -> bool:
                    return len(await a.rt.journal.unfinished()) == 1

                await eventually(journaled, 20, "the photo journaled by a")
                assert not fake_tg.calls_of("getFile")
                # a stalls past its lease and b takes the polling over; a keeps its turn
                await client.set(LEASE_KEY, "b", px=60_000)
                await eventually(lambda: state(a) is ChannelState.STANDBY, 20, "a lost it")
                await eventually(lambda: state(b) is ChannelState.RUNNING, 20, "b polls")
                assert adapter(a).bot is None  # a's polling bot is gone
                await client.delete(lock_key)  # the photo's turn runs on a, in standby
                await fake_tg.wait_for("sendMessage", count=1, timeout=30)
                assert state(a) is ChannelState.STANDBY
                a_metrics = a.rt.metrics.render().decode()
                b_metrics = b.rt.metrics.render().decode()
                assert adapter(a)._files_bot is not None  # the fetch-only bot did it
        assert adapter(a)._files_bot is None  # closed on stop
    finally:
        await client.aclose()
    request = fake_llm.requests[-1]
    content = request.messages[-1]["content"]
    assert content[0]["text"].startswith("what?")
    assert content[1]["image_url"]["url"] == (
        "data:image/png;base64," + base64.b64encode(image).decode()
    )
    assert fake_tg.files.downloads == ["files/ph-1.png"]
    assert 'reason="image_sent"' in a_metrics and 'reason="image_sent"' not in b_metrics
    assert "media_download_failed" not in a_metrics
