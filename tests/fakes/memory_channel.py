"""An in-memory chat channel: a real ChannelAdapter whose "platform" is a list.

Used where a test needs chat semantics (DMs, groups, ordering, send failures) without a platform
SDK, and by the pipeline benchmark. Inbound messages are injected; sends are recorded.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chatgate.channels.base import ChannelAdapter, ChannelContext, InboundSink, Rendered
from chatgate.channels.capabilities import AckMode, Capabilities
from chatgate.channels.descriptor import ChannelDescriptor
from chatgate.config.channel_models import ChatChannelConfig
from chatgate.model.messages import ChatKind, InboundMessage, SendResult, Target
from chatgate.model.results import Submission
from chatgate.presentation.limits import PresentationLimits


class MemoryChannelConfig(ChatChannelConfig):
    max_text_length: int = 4000
    typing: bool = True
    buttons: bool = True  # False: a plain-text chat (buttons degrade to text)


@dataclass(frozen=True)
class Sent:
    target: Target
    text: str
    at: float


class MemoryChannel(ChannelAdapter):
    platform = "memory"
    config_model = MemoryChannelConfig

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.config: MemoryChannelConfig = ctx.config
        self.sink: InboundSink | None = None
        self.sent: list[Sent] = []
        self.typing_calls: list[Target] = []
        self.failures: deque[SendResult | BaseException] = deque()
        self.send_attempts = 0
        self.start_gate: asyncio.Event | None = None
        self.after_send: Callable[[], None] | None = None  # e.g. the state store dies right after
        self._ids = itertools.count(1)
        self._msg_ids = itertools.count(1)
        self._sent_event = asyncio.Event()
        self.started = 0
        self.intake_stopped = False  # draining: a real platform would stop polling here
        self._starting = False
        self._capabilities: tuple[MemoryChannelConfig, Capabilities] | None = None

    @property
    def capabilities(self) -> Capabilities:
        config = self.config
        cached = self._capabilities
        if cached is None or cached[0] is not config:
            limits = PresentationLimits(
                max_text_length=config.max_text_length, supports_buttons=config.buttons
            )
            cached = self._capabilities = (
                config,
                Capabilities(
                    limits=limits,
                    ack=AckMode.TYPING if config.typing else AckMode.NONE,
                ),
            )
        return cached[1]

    async def start(self, sink: InboundSink) -> None:
        self.sink = sink
        self.started += 1
        self.intake_stopped = False
        if self.start_gate is not None:  # a slow start (a platform handshake under load)
            self._starting = True
            try:
                await self.start_gate.wait()
            finally:
                self._starting = False

    async def stop_intake(self) -> None:
        """Like a real poller: only input that has started can be stopped."""
        if not self._starting:
            self.intake_stopped = True

    async def stop(self) -> None:
        self.sink = None

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        self.send_attempts += 1
        if self.failures:
            failure = self.failures.popleft()
            if isinstance(failure, BaseException):
                raise failure
            return failure
        self.sent.append(Sent(target, rendered.text, time.monotonic()))
        self._sent_event.set()
        if self.after_send is not None:
            self.after_send()
        return SendResult.sent(str(next(self._ids)))

    async def typing(self, target: Target) -> None:
        self.typing_calls.append(target)

    async def inject(
        self,
        text: str,
        *,
        chat_id: str = "c1",
        sender_id: str = "u1",
        chat_kind: ChatKind = "direct",
        message_id: str | None = None,
        mention: bool = False,
        sender_is_bot: bool = False,
        sender_name: str = "Alice",
        **extra: Any,
    ) -> Submission:
        assert self.sink is not None, "channel not started"
        message_id = message_id or f"m{next(self._msg_ids)}"
        quote = message_id if chat_kind != "direct" else None
        msg = InboundMessage(
            channel=self.name,
            platform=self.platform,
            chat_id=chat_id,
            chat_kind=chat_kind,
            sender_id=sender_id,
            message_id=message_id,
            text=text,
            sender_name=sender_name,
            sender_is_bot=sender_is_bot,
            is_mention=mention,
            is_command=text.startswith("/"),
            received_at=time.time(),
            # what `default_target` gives, built inline: no copy of the message per injection
            reply_target=Target(self.name, chat_id, extra.get("thread_id"), quote),
            **extra,
        )
        return await self.sink.submit(msg)

    def texts(self, chat_id: str | None = None) -> list[str]:
        return [s.text for s in self.sent if chat_id is None or s.target.chat_id == chat_id]

    async def wait_sent(self, count: int, timeout: float = 5.0) -> list[Sent]:
        async def _wait() -> None:
            while len(self.sent) < count:
                self._sent_event.clear()
                await self._sent_event.wait()

        try:
            await asyncio.wait_for(_wait(), timeout)
        except TimeoutError:
            raise AssertionError(
                f"expected {count} sends, got {len(self.sent)}: {self.texts()}"
            ) from None
        return list(self.sent)


# How a plugin package would describe this channel (its entry point names this object).
DESCRIPTOR = ChannelDescriptor(
    platform="memory",
    config_model=MemoryChannelConfig,
    adapter="tests.fakes.memory_channel:MemoryChannel",
    limits=PresentationLimits(max_text_length=4000),
)
