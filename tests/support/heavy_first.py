"""Test files in order of their cost, heaviest first, so xdist does not end on a long one.

`--dist loadfile` hands files to workers in collection order, and collection is alphabetical: the
replica, kill -9 and reliability files (a minute each on a loaded worker) came last, and the run
ended with one worker busy and the others idle. `file_costs.tsv` holds CPU seconds per file from
`tests.support.cpu_profile` (`seconds<TAB>path`); files not in it keep their order after the listed
ones. Regenerate it when the heavy files change; a stale table only costs time, never a result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

COSTS = Path(__file__).with_name("file_costs.tsv")


def file_costs(path: Path = COSTS) -> dict[str, float]:
    costs: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        seconds, _, name = line.partition("\t")
        if name:
            costs[name] = float(seconds)
    return costs


def heaviest_first(items: list[pytest.Item], costs: dict[str, float]) -> list[pytest.Item]:
    """Stable: tests of one file keep their order, and unlisted files theirs."""
    order = {id(item): i for i, item in enumerate(items)}
    return sorted(
        items, key=lambda item: (-costs.get(item.nodeid.split("::")[0], 0.0), order[id(item)])
    )
