"""Talk to the running daemon's /api (stdlib only, so CLI commands start fast).

The daemon is found through `api.json` in its state directory (its real URL and a local
token); without one, through `gateway.http` and `gateway.api_token` from the config.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from chatgate.cli.common import EX_UNAVAILABLE, EX_USAGE, api_url, die
from chatgate.config.base import secret_value
from chatgate.config.loader import LoadedConfig
from chatgate.gateway.http.local_api import FILE_NAME, read_endpoint
from chatgate.operator.actions import SUMMARY_HEADER


class DaemonUnreachable(Exception):
    """Nothing answered at the daemon's address."""


REQUEST_TIMEOUT_S = 10.0  # an answer slower than this counts as no daemon
COPY_BYTES = 64 * 1024  # a download is copied to its file this much at a time


def _where(loaded: LoadedConfig, url: str | None) -> tuple[str, str | None]:
    configured = secret_value(loaded.config.gateway.api_token)
    if url is None:
        local = read_endpoint(loaded.state_dir)
        if local is not None:
            return local.url, local.token
    return api_url(loaded, url), configured


def _present(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a state dir closed to this user
        return True


def _tried(loaded: LoadedConfig, url: str | None) -> str:
    """Where the token came from, for an operator whose shell is not the daemon's."""
    api = loaded.state_dir / FILE_NAME
    if url is not None:
        local = "--url given, so the daemon's local token was not used"
    elif read_endpoint(loaded.state_dir) is not None:
        local = f"used the local token in {api} (a different daemon answered?)"
    elif _present(api):
        local = f"cannot read {api} (run as the daemon's user, e.g. with sudo)"
    else:
        local = f"no {api} (the daemon uses another state dir? set CHATGATE_STATE_DIR)"
    configured = "set" if secret_value(loaded.config.gateway.api_token) else "unset"
    return f"tried: {local}; gateway.api_token in {loaded.path} is {configured}"


def request(
    loaded: LoadedConfig,
    path: str,
    *,
    method: str = "GET",
    body: dict[str, Any] | None = None,
    url: str | None = None,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> dict[str, Any]:
    """The daemon's JSON answer (HTTP errors included, with `http_status`); raises
    DaemonUnreachable when no daemon answers."""
    base, token = _where(loaded, url)
    data = json.dumps(body).encode() if body is not None else (b"" if method != "GET" else None)
    req = urllib.request.Request(base + path, method=method, data=data)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as response:
            answer: dict[str, Any] = json.loads(response.read() or b"{}")
            return answer
    except urllib.error.HTTPError as exc:
        return _refused(exc, loaded, base, url)
    except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
        raise DaemonUnreachable(f"no answer at {base}: {getattr(exc, 'reason', exc)}") from None


def _refused(
    exc: urllib.error.HTTPError, loaded: LoadedConfig, base: str, url: str | None
) -> dict[str, Any]:
    """The daemon's error answer with its `http_status`; a refused token exits 69."""
    if exc.code == 401:
        die(f"{base} refused the API token; {_tried(loaded, url)}", EX_UNAVAILABLE)
    try:
        answer = json.loads(exc.read() or b"{}")
    except ValueError:
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    answer.setdefault("http_status", exc.code)
    return answer


def download(
    loaded: LoadedConfig,
    path: str,
    into: BinaryIO,
    *,
    method: str = "POST",
    body: dict[str, Any] | None = None,
    url: str | None = None,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> dict[str, Any]:
    """Copy a download action's bytes into ``into`` as they come; its summary with ``bytes``,
    or the daemon's error answer (a download cut short is an error too)."""
    base, token = _where(loaded, url)
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, method=method, data=data)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as response:
            summary: dict[str, Any] = json.loads(response.headers.get(SUMMARY_HEADER) or "{}")
            summary["bytes"] = _copy(response, into)
            return summary
    except urllib.error.HTTPError as exc:
        answer = _refused(exc, loaded, base, url)
        answer.setdefault("error", f"the daemon answered {exc.code}")
        return answer
    except (http.client.IncompleteRead, ConnectionError, TimeoutError) as exc:
        return {"error": f"the download from {base} was cut short ({type(exc).__name__})"}
    except urllib.error.URLError as exc:
        raise DaemonUnreachable(f"no answer at {base}: {exc.reason}") from None


def _copy(source: BinaryIO, into: BinaryIO) -> int:
    total = 0
    while chunk := source.read(COPY_BYTES):
        into.write(chunk)
        total += len(chunk)
    return total


def call(
    loaded: LoadedConfig,
    path: str,
    *,
    method: str = "GET",
    body: dict[str, Any] | None = None,
    url: str | None = None,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> dict[str, Any]:
    """Like `request`, for commands that need the running daemon: exit 69 when it is not."""
    try:
        return request(loaded, path, method=method, body=body, url=url, timeout_s=timeout_s)
    except DaemonUnreachable as exc:
        not_running(loaded, exc)


def not_running(loaded: LoadedConfig, exc: DaemonUnreachable) -> NoReturn:
    """Exit 69 saying where the daemon was looked for."""
    api = loaded.state_dir / FILE_NAME
    found = "found" if _present(api) else "not found"
    die(
        f"chatgate is not running ({exc}). Looked for {api} ({found}; state dir from "
        f"{loaded.path}), then gateway.http. Start it with `chatgate run`, or point "
        "CHATGATE_STATE_DIR / --config at the daemon's.",
        EX_UNAVAILABLE,
    )


def show(
    answer: dict[str, Any],
    as_json: bool,
    render: Callable[[], None],
    error_code: Callable[[dict[str, Any]], int] = lambda _answer: EX_USAGE,
) -> int:
    """Print the daemon's answer (as JSON or through `render`) and return 0; exit with
    `error_code(answer)` when it is an error."""
    if "error" in answer:
        die(str(answer["error"]), error_code(answer))
    if as_json:
        print(json.dumps(answer, indent=2, sort_keys=True))
    else:
        render()
    return 0
