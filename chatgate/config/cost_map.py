"""litellm's model cost map without importing litellm: the prices of its bundled JSON file.

litellm's import is ~200 MB that a daemon whose models all take the openai route never needs,
so until litellm is imported for something else the prices come from the same file litellm
loads (``LITELLM_LOCAL_MODEL_COST_MAP``), read once; once litellm is imported, its own
``model_cost``."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

COST_MAP_FILE = "model_prices_and_context_window_backup.json"
PRICE_FIELD = "_cost_per_"  # a field that prices a unit (token, second, character, image, …)

_lock = threading.Lock()
_bundled: dict[str, dict[str, Any]] | None = None


def _litellm_map() -> dict[str, Any] | None:
    loaded = getattr(sys.modules.get("litellm"), "model_cost", None)
    return loaded if isinstance(loaded, dict) and loaded else None


def cost_map() -> Mapping[str, Any]:
    """The cost map ({} when litellm is not installed): litellm's own once it is imported,
    else the prices of its bundled file, read on the first call (``load_cost_map`` reads it
    off the event loop) and dropped once litellm's copy exists."""
    global _bundled
    loaded = _litellm_map()
    if loaded is not None:
        _bundled = None
        return loaded
    with _lock:  # two first callers parse the file once
        if _bundled is None:
            _bundled = bundled_prices()
        return _bundled


async def load_cost_map() -> None:
    """Ready the cost map on a thread: the first read parses ~2.7 MB of JSON."""
    if _bundled is None and _litellm_map() is None:
        await asyncio.to_thread(cost_map)


def bundled_prices() -> dict[str, dict[str, Any]]:
    """Each model's price fields in litellm's bundled cost map file ({} without the file).

    Only the prices are kept: ~1 MB rather than the ~5 MB of the whole parsed file."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / COST_MAP_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    rows = {name: entry for name, entry in data.items() if isinstance(entry, dict)}
    prices: dict[str, dict[str, Any]] = {}
    for name, entry in _served(rows).items():
        found = {k: v for k, v in entry.items() if PRICE_FIELD in k and _number(v)}
        if found:
            prices[name] = found
    return prices


def _served(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The rows under the names litellm serves them by: a row whose ``alias_of`` names another
    row is that row, a row's ``aliases`` are further names for it; a pointer to nothing, or an
    alias that would shadow a model, is dropped (litellm's ``_expand_model_aliases``)."""
    pointers = {n: t for n, e in rows.items() if isinstance(t := e.get("alias_of"), str)}
    owners = _listed_aliases(rows, pointers)
    for alias, target in pointers.items():
        if target in rows and target not in pointers and alias not in owners:
            owners[alias] = target
    served = {n: e for n, e in rows.items() if n not in pointers or n in owners}
    served.update((alias, rows[owner]) for alias, owner in owners.items())
    return served


def _listed_aliases(rows: dict[str, dict[str, Any]], pointers: dict[str, str]) -> dict[str, str]:
    """Alias -> the row whose ``aliases`` list claims it first."""
    owners: dict[str, str] = {}
    for name, entry in rows.items():
        aliases = entry.get("aliases")
        if name in pointers or not isinstance(aliases, list):
            continue
        for alias in aliases:
            if (alias not in rows or alias in pointers) and alias not in owners:
                owners[alias] = name
    return owners


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _entries(model: str) -> list[dict[str, Any]]:
    table = cost_map()
    found = (table.get(name) for name in (model, model.split("/", 1)[-1]))
    return [entry for entry in found if isinstance(entry, dict)]


def map_price(model: str) -> tuple[float, float] | None:
    """(USD per input token, per output token) of ``model`` in the cost map, if listed."""
    for entry in _entries(model):
        cost_in = entry.get("input_cost_per_token")
        cost_out = entry.get("output_cost_per_token")
        if isinstance(cost_in, int | float) and isinstance(cost_out, int | float):
            return float(cost_in), float(cost_out)
    return None


def media_priced(model: str) -> bool:
    """Whether the cost map prices ``model`` in any unit (a transcription model by the second,
    a speech model by the character, or by tokens)."""
    return any(
        PRICE_FIELD in key and isinstance(value, int | float) and value > 0
        for entry in _entries(model)
        for key, value in entry.items()
    )


def price_per_second(model: str) -> float | None:
    """USD per second of audio of ``model`` in the cost map, if listed."""
    for entry in _entries(model):
        per_second = entry.get("input_cost_per_second")
        if isinstance(per_second, int | float):
            return float(per_second)
    return None
