"""The layout holds: every folder imports only folders below it, and no two modules import each
other (directly or round a loop). The order is the architecture's floor plan, bottom first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture.imports import ROOT, cycles, graph, imported, modules

# Bottom first. Rooms on one floor may not import each other; a room imports only lower floors.
FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset(floor.split())
    for floor in (
        "model clock secure_compare tracing genai_metrics tasks",
        "http_input policies",
        "presentation texts",
        "config",
        "state",
        "agents",
        "media",
        "channels",
        "operator",
        "feature",
        "schedules takeover approvals budgets telemetry people config_edit",
        "gateway",
        "cli",
        "__main__ __init__",
    )
)
# Inside the runtime, the same rule between its rooms (its top-level modules wire them).
GATEWAY_FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset(floor.split())
    for floor in (
        "metrics events process",
        "supervision",
        "delivery",
        "session_cache turn_stats logs",
        "runtime",
        "turn",
        "intake",
        "http",
        "reload",
        "operator_actions",
        "app features",
        "builder",
    )
)


def _floor(room: str, floors: tuple[frozenset[str], ...]) -> int:
    for number, floor in enumerate(floors):
        if room in floor:
            return number
    raise AssertionError(f"{room!r} is on no floor: add it to the floor plan")


def _room(module: str, depth: int) -> str:
    parts = module.split(".")
    return parts[depth] if len(parts) > depth else "__init__"


def upward(prefix: str, floors: tuple[frozenset[str], ...]) -> list[str]:
    """'a.py:12 room → room' for every import from a room to one above it (or beside it)."""
    known = modules()
    depth = prefix.count(".") + 1
    found = []
    for name, path in known.items():
        if not name.startswith(prefix + ".") and name != prefix:
            continue
        src = _room(name, depth)
        for dep, line in imported(path, known):
            if not dep.startswith(prefix + "."):
                continue
            dst = _room(dep, depth)
            if src == dst:
                continue
            if _floor(dst, floors) >= _floor(src, floors):
                found.append(f"{path.relative_to(ROOT.parent)}:{line} {src} → {dst}")
    return found


def test_every_folder_is_on_a_floor() -> None:
    rooms = {p.stem if p.is_file() else p.name for p in ROOT.iterdir() if p.name != "__pycache__"}
    for room in rooms:
        _floor(room, FLOORS)


def test_no_folder_imports_one_above_it() -> None:
    assert upward("chatgate", FLOORS) == []


def test_no_gateway_room_imports_one_above_it() -> None:
    assert upward("chatgate.gateway", GATEWAY_FLOORS) == []


def test_no_import_cycles_between_modules() -> None:
    assert cycles(graph()) == []


def test_the_checks_catch_what_they_look_for(tmp_path: Path) -> None:
    pkg = tmp_path / "chatgate"
    for room in ("model", "policies"):
        (pkg / room).mkdir(parents=True)
    (pkg / "model" / "a.py").write_text("from chatgate.policies.b import x\n")
    (pkg / "policies" / "b.py").write_text("from chatgate.model.a import y\n")
    assert cycles(graph(pkg)) == [["chatgate.model.a", "chatgate.policies.b"]]
    with pytest.raises(AssertionError):
        _floor("nowhere", FLOORS)
