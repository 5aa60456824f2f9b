"""The run order puts the costly test files first and keeps each file's tests together."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from tests.support.heavy_first import COSTS, file_costs, heaviest_first

ROOT = Path(__file__).resolve().parent.parent


def test_every_listed_file_exists() -> None:
    costs = file_costs()
    assert costs, COSTS
    missing = [name for name in costs if not (ROOT / name).is_file()]
    assert missing == [], f"stale entries in {COSTS.name}: regenerate it"


@dataclass
class _Item:
    nodeid: str


def test_heavy_files_go_first_and_each_file_stays_together_in_its_order() -> None:
    names = ["t/a.py::1", "t/b.py::1", "t/a.py::2", "t/c.py::1", "t/b.py::2", "t/d.py::1"]
    items = cast(list[Any], [_Item(n) for n in names])
    ordered = heaviest_first(items, {"t/c.py": 9.0, "t/b.py": 3.0})
    assert [i.nodeid for i in ordered] == [
        "t/c.py::1", "t/b.py::1", "t/b.py::2", "t/a.py::1", "t/a.py::2", "t/d.py::1",
    ]  # fmt: skip
