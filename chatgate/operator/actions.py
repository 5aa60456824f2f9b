"""`Action`: one operator action, declared once (name, typed arguments, typed result, handler).

The HTTP API mounts each action's `Route`, the CLI builds each action's `Command` from the
arguments dataclass, and the dashboard reads the actions that name a `DashboardPart`. An
argument's CLI shape and numeric bounds sit on its dataclass field (see `arg`).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from chatgate.operator.context import OperatorContext

INT64_MAX = 2**63 - 1
CliShape = Literal["positional", "optional_positional", "option"]


class Result(Protocol):
    """What every action answers: a frozen dataclass that knows its JSON shape."""

    def to_json(self) -> dict[str, Any]: ...


SUMMARY_HEADER = "X-Chatgate-Summary"  # a download's summary: compact JSON


@dataclass(frozen=True)
class Download:
    """An answer handed out as a file: its bytes as they are made (so any size fits), and what
    it holds (small JSON, sent in `SUMMARY_HEADER`)."""

    filename: str
    content_type: str
    summary: Mapping[str, Any]
    chunks: AsyncGenerator[bytes, None]

    def to_json(self) -> dict[str, Any]:
        return dict(self.summary)


A = TypeVar("A")
R = TypeVar("R", bound=Result)


@dataclass(frozen=True)
class ArgSpec:
    """How one argument is given: its CLI shape, help, and bounds when it is a number."""

    cli: CliShape = "positional"
    help: str = ""
    low: int = 0
    high: int = INT64_MAX


def arg(default: Any = dataclasses.MISSING, **spec: Any) -> Any:
    """A field of an arguments dataclass with its `ArgSpec` (keywords as `ArgSpec`'s)."""
    metadata = {"arg": ArgSpec(**spec)}
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def spec_of(field: dataclasses.Field[Any]) -> ArgSpec:
    found = field.metadata.get("arg")
    return found if isinstance(found, ArgSpec) else ArgSpec()


def is_required(field: dataclasses.Field[Any]) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


@dataclass(frozen=True)
class Route:
    """The action on the operator API: path parameters come from ``{name}`` in the path, the
    others from the query (GET, DELETE) or a JSON body (POST)."""

    method: Literal["GET", "POST", "DELETE"]
    path: str
    not_found_404: bool = False  # an answer with ``found: false`` is a 404
    download: bool = False  # the answer is a `Download`, streamed as it is made

    def path_params(self) -> tuple[str, ...]:
        return tuple(part[1:-1] for part in self.path.split("/") if part.startswith("{"))


@dataclass(frozen=True)
class Command:
    """The action on the command line: ``chatgate GROUP [VERB] ARGS``."""

    group: str
    verb: str | None = None
    help: str = ""
    json_flag: bool = False  # `--json` prints the answer as JSON
    offline: bool = True  # runs against the store itself when no daemon answers
    timeout_s: float = 10.0  # how long the CLI waits for the daemon's answer


@dataclass(frozen=True)
class DashboardPart:
    """The action's answer is a part of the dashboard's live snapshot, under ``key``."""

    key: str
    args: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # Read from the state store: while it is away, this empty answer with the reason.
    empty: Result | None = None


Handler = Callable[["OperatorContext", A], Awaitable[R]]


@dataclass(frozen=True)
class Action(Generic[A, R]):
    """One operator action."""

    name: str
    args: type[A]
    result: type[R]
    handler: Handler[A, R]
    route: Route
    command: Command | None = None
    dashboard: DashboardPart | None = None
    doc: str = ""

    def fields(self) -> tuple[dataclasses.Field[Any], ...]:
        return dataclasses.fields(self.args)  # type: ignore[arg-type]

    def is_number(self, name: str) -> bool:
        """Whether argument ``name`` is an integer (else it is text)."""
        kind = typing.get_type_hints(self.args)[name]
        return kind is int or int in typing.get_args(kind)

    def make_args(self, values: Mapping[str, Any]) -> A:
        return self.args(**values)


AnyAction = Action[Any, Any]


def by_name(actions: tuple[AnyAction, ...]) -> dict[str, AnyAction]:
    """The actions by name; a name declared twice is a programming error."""
    table: dict[str, AnyAction] = {}
    for action in actions:
        if action.name in table:
            raise ValueError(f"operator action {action.name!r} is declared twice")
        table[action.name] = action
    return table
