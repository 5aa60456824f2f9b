"""The config-change audit trail on SQLite: newest first, kept across a reopen, trimmed."""

from __future__ import annotations

from pathlib import Path

from chatgate.state.config_audit import KEEP, KV_NAME, ConfigAudit, ConfigChange
from chatgate.state.factory import Stores
from chatgate.state.sqlite import build_stores
from tests.harness import load, write_config


def change(at: float) -> ConfigChange:
    return ConfigChange(
        at, "apply", "127.0.0.1", "api", ("agents.default.model",), 2, 1, "gateway.yaml.1"
    )


async def _audit(tmp_path: Path) -> tuple[ConfigAudit, Stores]:
    loaded = load(write_config(tmp_path, "agents:\n  default: {backend: echo}\n"))
    loaded.state_dir.mkdir(parents=True, exist_ok=True)
    stores = build_stores(loaded.config.gateway, loaded.state_dir)
    await stores.open()
    audit: ConfigAudit = stores.kv[KV_NAME]  # type: ignore[assignment]
    return audit, stores


async def test_the_history_outlives_a_reopen_newest_first(tmp_path: Path) -> None:
    audit, stores = await _audit(tmp_path)
    first = await audit.record(change(1.0))
    second = await audit.record(change(2.0))
    await stores.close()
    audit, stores = await _audit(tmp_path)
    try:
        got = await audit.recent(5)
        assert [c.id for c in got] == [second, first]
        assert got[1] == ConfigChange.from_json(change(1.0).to_json(), first)
    finally:
        await stores.close()


async def test_only_the_newest_are_kept(tmp_path: Path) -> None:
    audit, stores = await _audit(tmp_path)
    try:
        for at in range(KEEP + 3):
            await audit.record(change(float(at)))
        kept = await audit.recent(KEEP + 10)
        assert len(kept) == KEEP and kept[0].at == KEEP + 2 and kept[-1].at == 3
    finally:
        await stores.close()
