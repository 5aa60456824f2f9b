"""`record`: a dataclass that behaves like a frozen one (equal and hashed by value, copied by
`replace`) and that mypy treats as frozen, without the frozen `__init__`'s cost."""

from __future__ import annotations

import dataclasses
import pickle
import textwrap
from pathlib import Path

from mypy import api

from chatgate.model.frozen import record
from chatgate.model.messages import InboundMessage, Target


@record(slots=True)
class Slotted:
    a: int
    b: str = "x"


@record
class Plain:
    a: int
    tags: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Frozen:
    a: int
    b: str = "x"


def test_equal_and_hashed_by_value_like_a_frozen_dataclass() -> None:
    assert Slotted(1) == Slotted(1, "x") and Slotted(1) != Slotted(2)
    assert hash(Slotted(1, "y")) == hash(Frozen(1, "y"))  # the same fields, the same hash
    assert {Plain(1, ("t",)): "v"}[Plain(1, ("t",))] == "v"
    assert repr(Slotted(1)).endswith("Slotted(a=1, b='x')")


def test_replace_copies_and_slots_are_kept() -> None:
    one = Slotted(1)
    two = dataclasses.replace(one, b="y")
    assert (one.b, two.b) == ("x", "y")
    assert not hasattr(one, "__dict__") and hasattr(Plain(1), "__dict__")
    assert pickle.loads(pickle.dumps(two)) == two


def test_the_message_keeps_its_key_and_its_value_semantics() -> None:
    msg = InboundMessage("tg", "telegram", "c1", "direct", "u1", "m1", "hi", reply_target=None)
    assert msg.key == "tg:m1"
    assert dataclasses.replace(msg, message_id="m2").key == "tg:m2"
    assert dataclasses.replace(msg) == msg
    assert {Target("tg", "c1", None, None): 1}[Target("tg", "c1", None, None)] == 1


def test_mypy_rejects_assigning_a_field(tmp_path: Path) -> None:
    source = tmp_path / "assigns.py"
    source.write_text(
        textwrap.dedent(
            """
            from chatgate.model.frozen import record

            @record(slots=True)
            class Point:
                x: int

            Point(1).x = 2
            """
        )
    )
    out, _, status = api.run(
        [str(source), "--strict", "--no-incremental", "--follow-imports=silent"]
    )
    assert status == 1 and 'Property "x" defined in "Point" is read-only' in out
