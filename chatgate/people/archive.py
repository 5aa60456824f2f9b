"""The export archive: one tar.gz with a JSON file per store and the stored files as they are."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chatgate.state.personal import Footprint, Found

if TYPE_CHECKING:
    import tarfile  # imported when an export is made, not at start

MAX_ARCHIVE_BYTES = 64 * 1024 * 1024  # the API answers with the archive in one JSON document


class ArchiveTooLarge(Exception):
    """The person's files would make an archive larger than the API hands out in one answer."""


def _add(tar: tarfile.TarFile, name: str, data: bytes, mtime: float) -> None:
    import tarfile

    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), int(mtime), 0o600
    tar.addfile(info, io.BytesIO(data))


def build(footprint: Footprint, found: Sequence[Found], now: float) -> bytes:
    """The archive's bytes (blocking: run it in a thread). ``person.json`` says what is inside."""
    total = sum(p.stat().st_size for part in found for p in part.files if p.is_file())
    if total > MAX_ARCHIVE_BYTES:
        raise ArchiveTooLarge(f"the person's files hold {total} bytes; at most {MAX_ARCHIVE_BYTES}")
    folder = "person-" + "".join(
        c if c.isalnum() or c in "-_." else "_" for c in footprint.person.address
    )
    out = io.BytesIO()
    import tarfile

    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        index = {
            "person": footprint.person.address,
            "exported_at": now,
            "exported_at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
            "footprint": footprint.to_json(),
            "stores": {part.store: part.count for part in found},
        }
        _add(tar, f"{folder}/person.json", _dump(index), now)
        for part in found:
            _add(tar, f"{folder}/{part.store}.json", _dump(list(part.records)), now)
            for path in part.files:
                _add_file(tar, f"{folder}/files/{part.store}/{path.name}", path, now)
    return out.getvalue()


def _add_file(tar: tarfile.TarFile, name: str, path: Path, now: float) -> None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return  # removed meanwhile (delivered and discarded): nothing to hand out
    _add(tar, name, data, now)


def _dump(value: object) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str).encode()
