"""A refused config change is audited too (who, when, the reason code, the keys it would have
changed; never a value), and `chatgate config history` shows it beside the applied ones."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chatgate.cli.main import main
from tests.config_edit.test_config_api import CONFIG as API_CONFIG
from tests.config_edit.test_config_api import PASSWORD, call, edited
from tests.harness import running, write_config

FRESH = "an0ther-Pa55word-abc"
CONFIG = API_CONFIG[: API_CONFIG.index("channels:")]  # the CLI loads no channel it lacks


async def test_refused_applies_are_in_the_history_without_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, CONFIG)
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        clear = edited(view["text"], "'**********'", f'"redis://:{FRESH}@127.0.0.1:6379/0"')
        invalid = edited(view["text"], "burst: 50", "burst: 0")
        for text in (clear, invalid):
            body = {"text": text, "etag": view["etag"], "by": "dashboard"}
            status, _ = await call(gw, "POST", "/api/config/apply", body)
            assert status == 422
        path.write_text(path.read_text() + "# someone else's edit\n")
        stale = {"text": edited(view["text"], "burst: 50", "burst: 40"), "etag": view["etag"]}
        status, _ = await call(gw, "POST", "/api/config/apply", stale)
        assert status == 409
        _, history = await call(gw, "GET", "/api/config/history")
        assert await asyncio.to_thread(main, ["config", "history", "--config", str(path)]) == 0
        shown = capsys.readouterr().out
    changes = history["changes"]
    assert [c["refused"] for c in changes] == [
        "config_changed_on_disk",
        "config_invalid",
        "config_clear_secret",
    ]
    assert [c["by"] for c in changes] == ["api", "dashboard", "dashboard"]
    assert all(c["action"] == "apply" and c["address"] == "127.0.0.1" for c in changes)
    assert changes[1]["changed"] == ["gateway.rate_limits.per_sender.burst"]
    assert changes[2]["changed"] == ["gateway.redis.url"]
    assert FRESH not in str(history) and PASSWORD not in str(history)
    assert FRESH not in shown and PASSWORD not in shown
    first = next(line for line in shown.splitlines() if line.startswith("#"))
    assert "apply  api · 127.0.0.1  refused: config_changed_on_disk" in first, shown
    assert not (tmp_path / "gateway.yaml.1").exists()


async def test_an_apply_refused_because_editing_is_off_is_audited(tmp_path: Path) -> None:
    path = write_config(tmp_path, "  config_edit: {enabled: false}\n" + CONFIG)
    async with running(path) as gw:
        _, view = await call(gw, "GET", "/api/config")
        text = edited(view["text"], "burst: 50", "burst: 40")
        body = {"text": text, "etag": view["etag"]}
        status, _ = await call(gw, "POST", "/api/config/apply", body)
        assert status == 403
        status, _ = await call(gw, "POST", "/api/config/rollback", {"number": "1"})
        assert status in (200, 403)
        _, history = await call(gw, "GET", "/api/config/history")
    refused = [(c["action"], c["refused"]) for c in history["changes"]]
    assert refused == [
        ("rollback to gateway.yaml.1", "config_edit_disabled"),
        ("apply", "config_edit_disabled"),
    ]
    assert history["changes"][1]["changed"] == ["gateway.rate_limits.per_sender.burst"]
