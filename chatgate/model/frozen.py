"""`record`: a dataclass immutable by type, for the records every message builds.

``@dataclass(frozen=True)`` sets each field in ``__init__`` through ``object.__setattr__`` (the
frozen ``__setattr__`` is in the way): ~600 instructions a field against ~20 for a plain store.
The message path builds some 120 such fields per turn (the message, its target, the agent's
``Turn``, the transcript lines, the admission facts, the send result, ...), about 4 % of a
turn's instructions. A ``record`` is a plain dataclass at run time (hashable and compared by
value like a frozen one) that type checkers treat as frozen: mypy rejects any assignment to
its fields (``Property "x" defined in "C" is read-only``), which is how its immutability is
kept; ``dataclasses.replace`` makes a changed copy, as for a frozen dataclass.

Use it only for records built on every message; elsewhere ``@dataclass(frozen=True)`` is the
default (its runtime check costs nothing that matters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar, dataclass_transform, overload

T = TypeVar("T")


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, slots: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(
    cls: type[T] | None = None, /, *, slots: bool = False
) -> type[T] | Callable[[type[T]], type[T]]:
    """``@dataclass(frozen=True[, slots=True])`` for type checkers; plain and hashable at run
    time (see the module's docstring)."""

    def make(klass: type[T]) -> type[T]:
        return dataclass(slots=slots, unsafe_hash=True)(klass)

    return make if cls is None else make(cls)
