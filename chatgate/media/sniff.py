"""The real type of a downloaded file, from its bytes (never the claimed MIME type alone)."""

from __future__ import annotations

from pathlib import Path

_TEXT_PROBE = 4096


def sniff(path: Path, claimed: str | None) -> str:
    """MIME type by magic number; a file without one is text when it decodes as UTF-8 (then the
    claimed text/* type is kept), else ``application/octet-stream``. Blocking: run in a thread."""
    import filetype  # on the first file, not at start

    kind = filetype.guess(str(path))
    if kind is not None:
        return str(kind.mime)
    with path.open("rb") as fh:
        head = fh.read(_TEXT_PROBE)
    if b"\x00" in head:
        return "application/octet-stream"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a multi-byte character cut at the probe's end is fine
            return "application/octet-stream"
    if claimed and (claimed.startswith("text/") or claimed.startswith("application/")):
        return claimed if claimed != "application/octet-stream" else "text/plain"
    return "text/plain"
