"""Human takeover as a feature: the gate after admission, the chats API, the resume loop."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chatgate.feature.base import Feature, Task
from chatgate.feature.context import FeatureContext
from chatgate.feature.intake import GateSlot, StageFn
from chatgate.feature.ports import RouteTable
from chatgate.model.results import DeliveryReport
from chatgate.state.records import DeadLetter
from chatgate.takeover.api import ChatsApi
from chatgate.takeover.service import Takeover


class TakeoverFeature(Feature):
    name = "takeover"

    def __init__(self, context: FeatureContext) -> None:
        self.service = Takeover(context)

    def gates(self) -> Mapping[GateSlot, Sequence[StageFn]]:
        return {GateSlot.AFTER_ADMISSION: (self.service.gate,)}

    def mount(self, routes: RouteTable) -> None:
        ChatsApi(self.service).mount(routes)

    def tasks(self) -> Mapping[str, Task]:
        return {"takeover-resume": self.service.run}

    async def open(self) -> None:
        await self.service.open()

    async def status(self) -> Mapping[str, Any]:
        return {"chats": await self.service.status()}

    async def replayed(self, entry: DeadLetter, report: DeliveryReport) -> None:
        await self.service.replayed(entry, report)
