"""Graph API failures on the way out: a pair rate limit waits and delivers once, an expired
token parks the channel with its fix while the other channels keep serving."""

from __future__ import annotations

import asyncio
from pathlib import Path

from chatgate.channels.whatsapp import errors
from tests.channels.telegram.helpers_b import settled
from tests.channels.whatsapp.support import USER, webhook_url, whatsapp_config
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.whatsapp import FakeWhatsApp, GraphFault
from tests.harness import eventually_channel_state, memory, running
from tests.support.waiting import eventually


async def test_a_pair_rate_limit_backs_off_then_delivers_once(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    clock = ManualClock()
    fake_wa.fail("messages", GraphFault(131056, "(#131056) Pair rate limit hit"), sends=True)
    async with running(whatsapp_config(tmp_path, fake_wa, fake_llm), clock=clock) as gw:
        await fake_wa.post(webhook_url(gw), fake_wa.message(USER, text="quick", wamid="wamid.IN-q"))
        refused = await fake_wa.wait_calls(lambda c: c.error == 131056)
        waits = await eventually(lambda: [s for s in clock.pending() if s >= 6.0], timeout=20)
        assert fake_wa.sent() == []
        clock.advance(max(waits))
        [sent] = await fake_wa.wait_sent(1)
        entry = await settled(gw, "whatsapp:wamid.IN-q")
        await asyncio.sleep(0)
    assert len(refused) == 1 and sent["text"]["body"] == "echo: quick"
    assert entry.delivery == "sent" and len(fake_wa.sent()) == 1
    assert min(waits) >= 6.0  # Meta asks for ~6 s between messages to one user


async def test_an_expired_token_parks_the_channel_and_other_channels_serve(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> None:
    config = whatsapp_config(
        tmp_path, fake_wa, fake_llm, extra_channels="  memory: {dm_policy: open}\n"
    )
    async with running(config) as gw:
        fake_wa.expire_token()
        await fake_wa.post(
            webhook_url(gw), fake_wa.message(USER, text="anyone?", wamid="wamid.IN-x")
        )
        parked = await eventually_channel_state(gw, "whatsapp", "parked")
        entry = await settled(gw, "whatsapp:wamid.IN-x")
        [letter] = await gw.rt.dead_letters.list()
        await memory(gw).inject("still working?")
        [served] = await memory(gw).wait_sent(1, timeout=20)
    assert "generate a new system-user token" in parked["hint"]
    assert parked["hint"] == errors.TOKEN_HINT
    assert entry.delivery == "undelivered" and letter.target.chat_id == USER  # kept for replay
    assert served.text == "echo: still working?"
    assert fake_wa.token not in str(parked)
