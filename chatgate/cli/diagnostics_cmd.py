"""`chatgate diagnostics export`: one redacted bundle to attach to a bug report.

A gzipped tar, written 0600, holding the effective config (as `config show` renders it), the
running daemon's status (or why it could not be had), `doctor --json` (offline: no network calls),
the last lines of a log file, and versions. Every member is scrubbed of the config's secrets.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import platform
import sys
import tarfile
import time
from importlib import metadata
from pathlib import Path

from chatgate.cli.api_client import DaemonUnreachable, request
from chatgate.cli.common import load_or_exit
from chatgate.cli.doctor_report import as_json, exit_code
from chatgate.config.loader import LoadedConfig
from chatgate.config.redact import render_yaml, scrub

LOG_LINES = 500
PACKAGES = ("chatgate", "aiohttp", "pydantic", "litellm", "python-telegram-bot", "discord.py")


def _versions() -> str:
    lines = [f"python {sys.version.split()[0]}", f"platform {platform.platform()}"]
    for name in PACKAGES:
        try:
            lines.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            lines.append(f"{name} not installed")
    return "\n".join(lines) + "\n"


def _tail(source: str | None) -> str:
    if source is None:
        return "(no log given: pass --log FILE, or --log - to read it from stdin)\n"
    try:
        if source == "-":
            text = sys.stdin.read()
        else:
            text = Path(source).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"(cannot read {source}: {exc.strerror})\n"
    return "\n".join(text.splitlines()[-LOG_LINES:]) + "\n"


def _status(loaded: LoadedConfig, url: str | None) -> str:
    try:
        return json.dumps(request(loaded, "/api/status", url=url), indent=2, sort_keys=True) + "\n"
    except DaemonUnreachable as exc:
        return json.dumps({"unreachable": str(exc)}) + "\n"


def export(given: str | None, *, out: str | None, log: str | None, url: str | None) -> int:
    from chatgate.cli.doctor_cmd import diagnose

    loaded = load_or_exit(given)
    findings = asyncio.run(diagnose(loaded.path, offline=True))
    members = {
        "config-show.yaml": render_yaml(loaded),
        "status.json": _status(loaded, url),
        "doctor.json": as_json(findings, exit_code(findings)) + "\n",
        "log-tail.txt": _tail(log),
        "versions.txt": _versions(),
    }
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = Path(out or f"chatgate-diagnostics-{stamp}.tar.gz")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in members.items():
            data = str(scrub(text, loaded.secrets)).encode()
            info = tarfile.TarInfo(f"chatgate-diagnostics/{name}")
            info.size, info.mtime, info.mode = len(data), int(time.time()), 0o600
            tar.addfile(info, io.BytesIO(data))
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)  # an existing file keeps its mode otherwise
        handle.write(buffer.getvalue())
    print(f"wrote {target} ({len(members)} files, secrets redacted)")
    return 0
