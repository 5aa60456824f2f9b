"""systemd service notification (sd_notify) over NOTIFY_SOCKET, without libsystemd.

Every call is a single non-blocking datagram and never raises: a gateway must not fail because
its supervisor is missing or slow. Without NOTIFY_SOCKET every call is a no-op returning False.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable, Mapping

log = logging.getLogger("chatgate.sdnotify")


def _address(raw: str) -> str | None:
    """Socket address from NOTIFY_SOCKET: an absolute path, or "@name" for an abstract socket."""
    if raw.startswith("@") and len(raw) > 1:
        return "\0" + raw[1:]
    if raw.startswith("/"):
        return raw
    return None


def _watchdog_interval(env: Mapping[str, str]) -> float | None:
    """Half of WATCHDOG_USEC in seconds, if the watchdog is configured for this process."""
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    if usec <= 0:
        return None
    pid = env.get("WATCHDOG_PID")
    if pid and pid != str(os.getpid()):
        return None  # meant for another process (e.g. a parent that exec'd us without clearing)
    return usec / 2 / 1_000_000


class Notifier:
    """Sends READY/STOPPING/WATCHDOG/STATUS notifications to the service manager."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        source = os.environ if env is None else env
        self._address = _address(source.get("NOTIFY_SOCKET", ""))
        self.enabled: bool = self._address is not None
        self.watchdog_interval_s: float | None = (
            _watchdog_interval(source) if self.enabled else None
        )

    def notify(self, *states: str) -> bool:
        """Send ``states`` ("KEY=value") as one datagram; True if it was handed to the socket."""
        if self._address is None or not states:
            return False
        payload = "\n".join(states).encode("utf-8", errors="replace")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.setblocking(False)
                sock.sendto(payload, self._address)
        except (OSError, ValueError) as exc:
            log.debug("sd_notify failed: %s", exc)
            return False
        return True

    def ready(self, status: str = "") -> bool:
        states = ["READY=1"]
        if status:
            states.append("STATUS=" + _one_line(status))
        return self.notify(*states)

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    async def watchdog_loop(self, healthy: Callable[[], bool]) -> None:
        """Ping WATCHDOG=1 every half watchdog period while ``healthy()``; withheld otherwise.

        Returns at once when no watchdog is configured. A raising ``healthy`` counts as unhealthy.
        """
        interval = self.watchdog_interval_s
        if interval is None:
            return
        while True:
            try:
                ok = healthy()
            except Exception:
                log.exception("health probe failed; withholding watchdog ping")
                ok = False
            if ok:
                self.watchdog()
            await asyncio.sleep(interval)


def _one_line(text: str) -> str:
    """The protocol is newline-separated, so a status must not contain newlines."""
    return " ".join(text.splitlines())
