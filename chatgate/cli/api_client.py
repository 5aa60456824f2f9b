"""Talk to the running daemon's /api (stdlib only, so CLI commands start fast)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from chatgate.cli.common import EX_UNAVAILABLE, api_url, die
from chatgate.config.base import secret_value
from chatgate.config.loader import LoadedConfig


def call(
    loaded: LoadedConfig, path: str, *, method: str = "GET", url: str | None = None
) -> dict[str, Any]:
    base = api_url(loaded, url)
    request = urllib.request.Request(
        base + path, method=method, data=b"" if method == "POST" else None
    )
    token = secret_value(loaded.config.gateway.api_token)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            data: dict[str, Any] = json.loads(response.read() or b"{}")
            return data
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            die(f"{base} refused the API token (check gateway.api_token)", EX_UNAVAILABLE)
        try:
            body: dict[str, Any] = json.loads(exc.read() or b"{}")
        except ValueError:
            body = {}
        body.setdefault("http_status", exc.code)
        return body
    except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        die(
            f"chatgate is not running (no answer at {base}: {reason}). "
            "Start it with `chatgate run` or check gateway.http in the config.",
            EX_UNAVAILABLE,
        )
