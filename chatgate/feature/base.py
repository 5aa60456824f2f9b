"""`Feature`: what a cross-cutting feature contributes to the gateway, each part optional.

The builder creates each feature with a `FeatureContext` and hands the list to the gateway,
which plugs the intake parts (gates, commands, route hints) into the message path, mounts the
HTTP routes and operator actions, runs the background tasks and calls the lifecycle hooks in order:
open (state is open; before channels start) → start (serving) → stop (draining) → close.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, ClassVar

from chatgate.config.loader import LoadedConfig
from chatgate.feature.intake import CommandHandler, GateSlot, HintSource, StageFn
from chatgate.feature.ports import RouteTable
from chatgate.feature.turns import ToolApprover, TurnMeters
from chatgate.model.results import DeliveryReport
from chatgate.operator.actions import AnyAction
from chatgate.state.personal import PersonalData
from chatgate.state.records import DeadLetter

Task = Callable[[], Coroutine[Any, Any, None]]


class Feature:
    """Override what the feature contributes; the defaults contribute nothing."""

    name: ClassVar[str] = "feature"

    def gates(self) -> Mapping[GateSlot, Sequence[StageFn]]:
        """Intake stages, by where they stand among the built-in ones."""
        return {}

    def commands(self) -> Mapping[str, CommandHandler]:
        """Chat commands (`/name`) the feature answers."""
        return {}

    def hint_sources(self) -> Sequence[HintSource]:
        """Route hints for messages the feature itself submitted (a schedule's runs)."""
        return ()

    def tool_approver(self) -> ToolApprover | None:
        """Asks a person before a tool call runs (one feature at most offers it)."""
        return None

    def turn_meters(self) -> TurnMeters | None:
        """Meters each turn's model calls and may refuse or degrade it (the budgets)."""
        return None

    def mount(self, routes: RouteTable) -> None:
        """Add the feature's HTTP routes (behind the operator API token unless public)."""

    def actions(self) -> Sequence[AnyAction]:
        """Operator actions (served on the API, the CLI and the dashboard like the built-in
        ones); their handlers close over the feature."""
        return ()

    def personal_data(self) -> Sequence[PersonalData]:
        """What the feature keeps about a person (its jobs, its counters), for `chatgate people`
        show, export and erase."""
        return ()

    def tasks(self) -> Mapping[str, Task]:
        """Background loops run from start until stop, by name."""
        return {}

    async def open(self) -> None:
        """Load what the feature keeps (the state is open, nothing is received yet)."""

    async def start(self) -> None:
        """The gateway serves: begin work that sends or submits."""

    async def stop(self) -> None:
        """Draining begins: submit nothing more."""

    async def close(self) -> None:
        """Channels have stopped: release what `open` took."""

    def apply_config(self, loaded: LoadedConfig) -> None:
        """Take a re-read, validated config (hot reload)."""

    async def status(self) -> Mapping[str, Any]:
        """Sections added to `/api/status` (secrets are scrubbed by the gateway)."""
        return {}

    async def replayed(self, entry: DeadLetter, report: DeliveryReport) -> None:
        """A dead letter was delivered again by an operator."""
