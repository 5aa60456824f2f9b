"""Replacing the config file: atomic, the previous versions moved up and the oldest dropped,
the file's mode kept; what makes a file not replaceable here."""

from __future__ import annotations

import os
from pathlib import Path

from chatgate.config_edit import files


def test_versions_move_up_and_the_oldest_past_keep_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text("v0\n")
    os.chmod(path, 0o640)
    for n in range(1, 5):
        assert files.replace(path, f"v{n}\n", keep=2) == "gateway.yaml.1"
    assert path.read_text() == "v4\n"
    assert (tmp_path / "gateway.yaml.1").read_text() == "v3\n"
    assert (tmp_path / "gateway.yaml.2").read_text() == "v2\n"
    assert not (tmp_path / "gateway.yaml.3").exists()
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "gateway.yaml", "gateway.yaml.1", "gateway.yaml.2",
    ]  # fmt: skip
    assert [n for n, _ in files.backups(path, keep=5)] == [1, 2]


def test_a_symlinked_file_is_replaced_where_it_really_is(tmp_path: Path) -> None:
    real = tmp_path / "etc" / "gateway.yaml"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "gateway.yaml"
    link.symlink_to(real)
    files.replace(link, "new\n", keep=3)
    assert link.is_symlink() and link.read_text() == "new\n"
    assert (real.parent / "gateway.yaml.1").read_text() == "old\n"


def test_the_tag_follows_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text("a: 1\n")
    first = files.read(path).etag
    path.write_text("a: 2\n")
    assert files.read(path).etag != first
    path.write_text("a: 1\n")
    assert files.read(path).etag == first


def test_a_configmap_directory_is_not_replaceable(tmp_path: Path) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text("a: 1\n")
    assert files.unwritable(path) is None
    (tmp_path / "..data").symlink_to(tmp_path)
    assert "ConfigMap" in (files.unwritable(path) or "")
