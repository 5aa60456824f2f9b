"""Opt-in pytest plugin: CPU seconds per test, its child processes included (reaped ones).

    python -m pytest -p tests.support.cpu_profile --cpu-report=build/cpu.tsv -n 0 tests/...

Wall time says little on a loaded machine; user+sys of the test process and its waited-for
children says what a test costs. The report is one `seconds<TAB>nodeid` line per test, largest
first; a session-scoped server is charged to the first test that asked for it.
"""

from __future__ import annotations

import resource
from collections.abc import Generator
from pathlib import Path

import pytest

_COSTS: dict[str, float] = {}


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-report", default=None, help="write CPU seconds per test to this file")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    start = _cpu()
    yield
    _COSTS[item.nodeid] = _COSTS.get(item.nodeid, 0.0) + _cpu() - start


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = session.config.getoption("--cpu-report")
    if not target or not _COSTS:
        return
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(_COSTS.items(), key=lambda kv: -kv[1])
    total = sum(_COSTS.values())
    lines = [f"{total:.2f}\tTOTAL ({len(rows)} tests)"]
    lines += [f"{cost:.2f}\t{nodeid}" for nodeid, cost in rows]
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
