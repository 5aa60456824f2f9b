"""`chatgate diagnostics export`: a 0600 tar.gz with config, status, doctor, log tail and versions,
and no secret anywhere in it."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from chatgate.cli.main import main

TOKEN = "123456:AAdiagnostics-SECRET-token-xyz"
HOOK = "whsec-diagnostics-SECRET-55"
KEY = "sk-diagnostics-SECRET-key-9"


def test_export_is_private_complete_and_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(
        f"config_version: 1\n"
        f"gateway: {{state_dir: {tmp_path / 'state'}, http: {{port: 1}}}}\n"
        f"agents: {{default: {{backend: litellm, model: openai/m, api_key: {KEY}}}}}\n"
        "channels:\n"
        f"  telegram: {{token: '{TOKEN}'}}\n"
        f"  webhook: {{routes: {{gh: {{path: /hooks/gh, secret: {HOOK}}}}}}}\n"
    )
    log = tmp_path / "daemon.log"
    log.write_text("".join(f"line {i} token={TOKEN} key={KEY}\n" for i in range(1000)))
    out = tmp_path / "bundle.tar.gz"

    code = main(
        ["diagnostics", "export", "--config", str(path), "--out", str(out), "--log", str(log)]
    )

    assert code == 0 and "secrets redacted" in capsys.readouterr().out
    assert out.stat().st_mode & 0o777 == 0o600
    with tarfile.open(out) as tar:
        files = {
            m.name.split("/")[-1]: tar.extractfile(m).read().decode()  # type: ignore[union-attr]
            for m in tar.getmembers()
        }
    assert set(files) == {
        "config-show.yaml",
        "status.json",
        "doctor.json",
        "log-tail.txt",
        "versions.txt",
    }
    assert "unreachable" in json.loads(files["status.json"])  # no daemon on port 1
    doctor = json.loads(files["doctor.json"])
    assert "webhook.gh.secret" in [c["id"] for c in doctor["checks"]]
    assert files["log-tail.txt"].count("\n") == 500 and "line 999" in files["log-tail.txt"]
    assert "chatgate" in files["versions.txt"] and "gh:" in files["config-show.yaml"]
    everything = "".join(files.values())
    for secret in (TOKEN, HOOK, KEY):
        assert secret not in everything
