"""`chatgate config history` and `chatgate config rollback N`, as operator actions (the API,
the CLI and the page read the same declarations)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chatgate.operator.actions import Action, AnyAction, Command, Route, arg
from chatgate.operator.context import NeedsDaemon, OperatorContext
from chatgate.state.config_audit import KEEP, KV_NAME, ConfigAudit, ConfigChange


@dataclass(frozen=True)
class HistoryArgs:
    limit: int = arg(20, cli="option", help="most changes shown", low=1, high=KEEP)


@dataclass(frozen=True)
class RollbackArgs:
    number: int = arg(help="the kept version to put back (1: the newest, gateway.yaml.1)",
                      low=1, high=100)  # fmt: skip


@dataclass(frozen=True)
class ConfigHistory:
    changes: Sequence[ConfigChange]

    def to_json(self) -> dict[str, Any]:
        return {"changes": [c.to_json() for c in self.changes]}


@dataclass(frozen=True)
class ConfigRollback:
    """The outcome as the page's apply answers it (ok, etag, backup, reload, change), or the
    refusal (error, reason_code, hint, issues)."""

    outcome: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return dict(self.outcome)


async def history(context: OperatorContext, args: HistoryArgs) -> ConfigHistory:
    store: ConfigAudit = context.state.stores.kv[KV_NAME]  # type: ignore[assignment]
    return ConfigHistory(tuple(await store.recent(args.limit)))


RollbackHandler = Callable[[OperatorContext, RollbackArgs], Awaitable[ConfigRollback]]


async def needs_daemon(context: OperatorContext, args: RollbackArgs) -> ConfigRollback:
    raise NeedsDaemon("a rollback is applied by the running daemon (its hot reload)")


CONFIG_HISTORY = Action(
    "config_history", HistoryArgs, ConfigHistory, history,
    Route("GET", "/api/config/history"),
    Command("config", "history", help="changes made from the dashboard, the API or the CLI",
            json_flag=True),
)  # fmt: skip


def rollback_action(handler: RollbackHandler = needs_daemon) -> AnyAction:
    """The rollback action over ``handler`` (the running feature's, in the daemon)."""
    return Action(
        "config_rollback", RollbackArgs, ConfigRollback, handler,
        Route("POST", "/api/config/rollback"),
        Command("config", "rollback", help="put back a kept previous version and reload",
                offline=False),
    )  # fmt: skip


def declared() -> tuple[AnyAction, ...]:
    """The declarations, for the CLI's parsers (it asks the daemon to run them)."""
    return (CONFIG_HISTORY, rollback_action())
