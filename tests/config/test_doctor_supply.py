"""`chatgate doctor` supply-chain checks: a `.pth` that runs code and is not on the known-good
list fails with the file and what it runs; a known-bad version (litellm 1.82.7) fails; both under
stable `--json` ids. The end-to-end case plants both in a fresh venv and runs the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from chatgate.cli.doctor_supply import (
    KNOWN_BAD_CHECK,
    PTH_CHECK,
    check_known_bad,
    check_pth,
    installed_versions,
)
from chatgate.config.findings import Level

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = "aW1wb3J0IHN5czsgc3lzLnN0ZGVyci53cml0ZSgnc3RlYWxpbmdcbicp"  # writes "stealing"
STEALER = f"import os, base64; exec(base64.b64decode('{PAYLOAD}'))\n"


def plant(site: Path, *, litellm: str | None = "1.82.7") -> None:
    site.mkdir(parents=True, exist_ok=True)
    (site / "litellm_init.pth").write_text(STEALER)
    (site / "paths.pth").write_text("/opt/extra\n# a comment\n")  # runs nothing
    (site / "__editable__.mytool-1.0.pth").write_text(
        "import __editable___mytool_1_0_finder; __editable___mytool_1_0_finder.install()\n"
    )
    if litellm:
        info = site / f"litellm-{litellm}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: litellm\nVersion: {litellm}\n"
        )


def test_an_unknown_pth_that_runs_code_fails_with_the_file_and_its_code(tmp_path: Path) -> None:
    plant(tmp_path)
    finding = check_pth([tmp_path], {"mytool": "1.0"})
    assert (finding.check, finding.level) == (PTH_CHECK, Level.FAIL)
    assert str(tmp_path / "litellm_init.pth") in finding.detail
    assert "exec(base64.b64decode(" in finding.detail
    assert "paths.pth" not in finding.detail and "mytool" not in finding.detail
    assert finding.fix and "rotate" in finding.fix


def test_an_editable_hook_counts_only_for_an_installed_distribution(tmp_path: Path) -> None:
    plant(tmp_path)
    (tmp_path / "litellm_init.pth").unlink()
    assert check_pth([tmp_path], {"mytool": "1.0"}).level is Level.OK
    assert check_pth([tmp_path], {"mytool": "2.0"}).level is Level.FAIL
    assert check_pth([tmp_path], {}).level is Level.FAIL


def test_known_bad_versions_fail(tmp_path: Path) -> None:
    plant(tmp_path)
    installed = installed_versions([str(tmp_path)])
    assert installed["litellm"] == "1.82.7"
    bad = check_known_bad(installed)
    assert (bad.check, bad.level) == (KNOWN_BAD_CHECK, Level.FAIL)
    assert "litellm 1.82.7" in bad.detail and "24512" in bad.detail
    assert check_known_bad({"litellm": "1.110.2"}).level is Level.OK


def test_doctor_on_a_poisoned_venv(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    plant(site)
    # the project's own environment after the planted files (a path line runs nothing)
    (site / "zz_chatgate_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    config = tmp_path / "gateway.yaml"
    config.write_text(
        f"config_version: 1\ngateway: {{state_dir: {tmp_path / 'state'}}}\n"
        "agents: {default: {backend: echo}}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["-m", "chatgate", "doctor", "--offline", "--json", "--config", str(config)]
    done = subprocess.run([python, *args], capture_output=True, text=True, env=env, timeout=120)
    checks = {c["id"]: c for c in json.loads(done.stdout)["checks"]}
    assert done.returncode != 0 and "stealing" in done.stderr  # it did run at start
    assert checks[PTH_CHECK]["severity"] == "fail", checks[PTH_CHECK]
    assert "litellm_init.pth runs import os, base64" in checks[PTH_CHECK]["detail"]
    assert checks[KNOWN_BAD_CHECK]["severity"] == "fail"
    assert "litellm 1.82.7" in checks[KNOWN_BAD_CHECK]["detail"]
    print(done.stdout)  # the closing note quotes it
    clean = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, timeout=120
    )
    ours = {c["id"]: c["severity"] for c in json.loads(clean.stdout)["checks"]}
    assert ours[PTH_CHECK] == "ok" and ours[KNOWN_BAD_CHECK] == "ok"
