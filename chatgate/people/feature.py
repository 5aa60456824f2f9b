"""Privacy as a feature: `chatgate people` / `/api/people/…` (show, export, erase, audit), the
retention purge, and the per-person data the other features contribute."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from chatgate.feature.base import Feature, Task
from chatgate.feature.context import FeatureContext
from chatgate.operator.actions import AnyAction
from chatgate.people import retention
from chatgate.people.actions import people_actions
from chatgate.people.desk import PrivacyDesk
from chatgate.state.personal import Person, PersonalData, spill_file

RETENTION_TASK = "privacy-retention"


class People(Feature):
    name = "people"

    def __init__(
        self,
        context: FeatureContext,
        contributors: Callable[[], Sequence[Feature]] = tuple,
    ) -> None:
        """``contributors``: the other features, asked for their parts at each request."""
        self.context = context
        self.contributors = contributors
        self.desk = PrivacyDesk(
            context.state,
            context.clock,
            files=context.files,
            extra=self._extra,
            forget=context.transcripts.forget,
            spill=spill_file(context.loaded.state_dir),
            aliases=self._aliases,
        )

    def _aliases(self, person: Person) -> list[Person]:
        """Every address configured under the person's principal (`identities:`)."""
        for addresses in self.context.config.identities.values():
            if person.address in addresses:
                return [Person.parse(a) for a in addresses]
        return [person]

    async def _extra(self, person: Person) -> Sequence[PersonalData]:
        """The features' parts, and those of the person's channel (its own stores)."""
        parts = [part for f in self.contributors() for part in f.personal_data()]
        adapter = await self.context.channels.ready_adapter(person.channel)
        return [*parts, *(adapter.personal_data() if adapter is not None else ())]

    def actions(self) -> Sequence[AnyAction]:
        return people_actions(self.desk)

    def tasks(self) -> Mapping[str, Task]:
        """The retention purge (it reads `retention:` at each pass, so a reload applies)."""
        personal = self.context.state.stores.personal
        if personal is None:
            return {}
        return {
            RETENTION_TASK: partial(
                retention.run_forever, personal, self.context.live, self.context.clock
            )
        }

    async def status(self) -> Mapping[str, Any]:
        config = self.context.config.retention
        if config.days is None and not config.channels:
            return {}
        return {"retention": {"days": config.days, "channels": dict(config.channels)}}
