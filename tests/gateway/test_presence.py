"""The typing indicator: only for turns that take a while, never cancelled mid-request."""

from __future__ import annotations

import asyncio

from chatgate.channels.base import ChannelAdapter, ChannelContext, InboundSink
from chatgate.channels.capabilities import AckMode, Capabilities
from chatgate.clock import SystemClock
from chatgate.gateway.delivery.presence import typing_while
from chatgate.model.messages import Target
from chatgate.presentation.limits import PLAIN


class SlowTypingChannel(ChannelAdapter):
    platform = "slowtyping"

    def __init__(self, every_s: float) -> None:
        super().__init__(ChannelContext("slow", None, None, None, None))  # type: ignore[arg-type]
        self.every_s = every_s
        self.started_calls = 0
        self.finished_calls = 0

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(limits=PLAIN, ack=AckMode.TYPING, typing_every_s=self.every_s)

    async def start(self, sink: InboundSink) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def typing(self, target: Target) -> None:
        self.started_calls += 1
        await asyncio.sleep(0.2)  # an HTTP request in flight
        self.finished_calls += 1


async def test_fast_turns_send_no_typing_and_slow_ones_do() -> None:
    channel = SlowTypingChannel(every_s=0.1)
    target = Target("slow", "1")
    async with typing_while(channel, target, SystemClock(), after_s=0.15):
        await asyncio.sleep(0.05)
    assert channel.started_calls == 0
    async with typing_while(channel, target, SystemClock(), after_s=0.05):
        await asyncio.sleep(0.6)
    assert channel.started_calls >= 2


async def test_an_in_flight_typing_call_is_allowed_to_finish() -> None:
    channel = SlowTypingChannel(every_s=5)
    async with typing_while(channel, Target("slow", "1"), SystemClock(), after_s=0.01):
        await asyncio.sleep(0.05)  # the turn ends while the typing request is in flight
    assert channel.started_calls == 1
    assert channel.finished_calls == 1  # not cancelled: SDK connection pools leak on that
