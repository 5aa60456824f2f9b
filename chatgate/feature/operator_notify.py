"""Sends failed turns' operator detail to ``gateway.operator_notify`` (a CHANNEL:CHAT),
rate-limited per reason, and other operator events as they come (a chat's pause ran out);
delivery runs in the background and never delays a turn."""

from __future__ import annotations

import asyncio
import logging

from chatgate.clock import Clock
from chatgate.feature.ports import Deliver, LiveConfig
from chatgate.model.messages import Target
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import FailureReason
from chatgate.policies.failure import FailureReply
from chatgate.policies.operator_notify import NotifyState, decide_notify, operator_text

log = logging.getLogger("chatgate.operator_notify")


class OperatorNotifier:
    def __init__(self, live: LiveConfig, clock: Clock, deliver: Deliver) -> None:
        self.live = live
        self.clock = clock
        self.deliver = deliver
        self._states: dict[FailureReason, NotifyState] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def failed(self, failure: FailureReply, where: str, agent: str) -> None:
        """Tell the operator about a failed turn in ``where`` (channel:chat), if due."""
        gateway = self.live.loaded.config.gateway
        if gateway.operator_notify is None:
            return
        state = self._states.get(failure.reason, NotifyState())
        send, self._states[failure.reason] = decide_notify(
            failure.reason, state, self.clock.monotonic(), gateway.operator_notify_every_s
        )
        if not send:
            return
        text = operator_text(failure.reason, failure.detail, where, agent, state.held_back)
        task = asyncio.create_task(self._send(Target.parse(gateway.operator_notify), text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def tell(self, text: str) -> None:
        """Send ``text`` to the operator chat as it is, in the background: an event the
        operator acts on, each happening once (no rate limit)."""
        where = self.live.loaded.config.gateway.operator_notify
        if where is None:
            return
        task = asyncio.create_task(self._send(Target.parse(where), text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, target: Target, text: str) -> None:
        report = await self.deliver(target, OutboundMessage.from_text(text))
        if report.kind is not None:
            log.warning(
                "operator notice not delivered",
                extra={"channel": target.channel, "send_error": report.kind.value},
            )
