"""Every config block of the Teams manual is one `chatgate config check` accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chatgate.cli.main import main

PAGE = Path(__file__).resolve().parents[3] / "docs" / "channels" / "teams.md"


BLOCKS = re.findall(r"```yaml\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("block", BLOCKS)
def test_the_documented_section_passes_config_check(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TEAMS_APP_ID", "3f2b1c4d-0000-4000-8000-00000000a11d")
    monkeypatch.setenv("TEAMS_APP_PASSWORD", "docs-example-secret")
    monkeypatch.setenv("TEAMS_TENANT_ID", "72f988bf-0000-4000-8000-0000000000aa")
    path = tmp_path / "gateway.yaml"
    path.write_text("config_version: 1\nagents: {default: {backend: echo}}\n" + block)
    try:
        code = main(["config", "check", "--config", str(path)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert "docs-example-secret" not in out.out + out.err
