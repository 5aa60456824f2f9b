"""The operator actions in the running daemon: the context their handlers run with here
(replay through delivery, a session reset that also clears the warm cache, live statistics)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chatgate.feature.base import Feature
from chatgate.gateway.runtime import Runtime
from chatgate.media.outgoing import refs_in
from chatgate.model.outbound import message_from_dict
from chatgate.operator.actions import AnyAction, by_name
from chatgate.operator.catalog import BUILTIN
from chatgate.operator.results import DlqReplay
from chatgate.state.factory import State
from chatgate.state.records import DeadLetter


def declared_actions(features: Sequence[Feature]) -> dict[str, AnyAction]:
    """The built-in actions and those the features contribute, by name."""
    return by_name(BUILTIN + tuple(a for f in features for a in f.actions()))


class DaemonOperator:
    """`OperatorContext` over the running gateway."""

    def __init__(self, runtime: Runtime, features: Sequence[Feature]) -> None:
        self.rt = runtime
        self.features = features

    @property
    def state(self) -> State:
        return self.rt.state

    def now(self) -> float:
        return self.rt.clock.time()

    async def dead_letter_dropped(self, held: DeadLetter) -> None:
        if self.rt.delivery.files is not None:
            await self.rt.delivery.files.discard_refs(refs_in(held.message))
        self.rt.metrics.dlq_size.set(await self.rt.dead_letters.count())

    async def replay_dead_letter(self, entry_id: int) -> DlqReplay:
        runtime = self.rt
        standby = runtime.channels.standby()
        if standby:  # an exclusive channel another replica holds: only that one can send on it
            held = await runtime.dead_letters.get(entry_id)
            if held is not None and held.target.channel in standby:
                return DlqReplay(
                    True,
                    entry_id,
                    status="standby",
                    holders=await runtime.state.leases.holders(),
                    hint=f"another replica holds channel '{held.target.channel}'; "
                    "replay it there (chatgate dlq replay --url <that replica>)",
                )
        entry = await runtime.dead_letters.take(entry_id)
        if entry is None:
            return DlqReplay(False, entry_id)
        data = dict(entry.message)
        first = int(data.pop("first_chunk", 0) or 0)
        await runtime.dead_targets.revive(entry.target.address)
        report = await runtime.delivery.deliver(
            entry.target,
            message_from_dict(data),
            inbound_key=entry.inbound_key,
            session=entry.session,
            first_chunk=first,
        )
        runtime.metrics.dlq_size.set(await runtime.dead_letters.count())
        for feature in self.features:
            await feature.replayed(entry, report)
        kind = report.kind.value if report.kind else None
        return DlqReplay(True, entry_id, status=report.status.value, kind=kind)

    async def reset_session(self, key: str) -> int:
        """A fresh transcript, in the store and in the warm cache (what `/new` does in chat)."""
        runtime = self.rt
        session = await runtime.cache.acquire(key, runtime.clock.time())
        try:
            epoch = await runtime.state.sessions.reset(key, runtime.clock.time())
            runtime.cache.reset(session, epoch)
        finally:
            runtime.cache.release(session)
        return epoch

    def turn_stats(self) -> Mapping[str, Any]:
        return self.rt.turn_stats.snapshot(self.rt.clock.time())
