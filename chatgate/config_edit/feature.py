"""Config from the dashboard as a feature: the Config page and /api/config routes, and the
history and rollback operator actions."""

from __future__ import annotations

from collections.abc import Sequence

from chatgate.config_edit.actions import (
    CONFIG_HISTORY,
    ConfigRollback,
    RollbackArgs,
    rollback_action,
)
from chatgate.config_edit.api import ConfigApi
from chatgate.config_edit.service import ConfigEditor, Refused
from chatgate.feature.base import Feature
from chatgate.feature.context import FeatureContext
from chatgate.feature.ports import RouteTable
from chatgate.operator.actions import AnyAction
from chatgate.operator.context import CALLER, OperatorContext


class ConfigEdit(Feature):
    name = "config_edit"

    def __init__(self, context: FeatureContext) -> None:
        assert context.config_files is not None, "the builder gives config_files"
        self.editor = ConfigEditor(context.live, context.state, context.clock, context.config_files)

    def mount(self, routes: RouteTable) -> None:
        ConfigApi(self.editor).mount(routes)

    def actions(self) -> Sequence[AnyAction]:
        return (CONFIG_HISTORY, rollback_action(self._rollback))

    async def _rollback(self, context: OperatorContext, args: RollbackArgs) -> ConfigRollback:
        try:
            done = await self.editor.rollback(args.number, address=CALLER.get(), by="cli")
        except Refused as refused:
            return ConfigRollback(refused.to_json())
        return ConfigRollback(done)
