"""An OTLP/HTTP sender: POSTs encoded export requests (protobuf bytes) to a signal's URL.

Configured from the standard OTEL_EXPORTER_OTLP_* environment as the SDK's exporters read it
(the signal's own variable first: ``OTEL_EXPORTER_OTLP_TRACES_HEADERS`` before
``OTEL_EXPORTER_OTLP_HEADERS``): headers, timeout (milliseconds, as the specification says),
compression (``gzip``, ``deflate``), the CA certificate and a client certificate and key. It
keeps one connection open (standard library ``http.client``, through the proxy the
environment names) and retries a request the collector could not take yet (429, 502, 503, 504,
or a dropped connection) with exponential backoff and jitter, within the timeout and at most
six attempts, as the SDK's exporters do. Runs on chatgate's export thread, never the loop.
"""

from __future__ import annotations

import gzip
import http.client
import logging
import random
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from opentelemetry.util.re import parse_env_headers

from chatgate import __version__

log = logging.getLogger("chatgate.telemetry")

RETRYABLE = frozenset({429, 502, 503, 504})
ATTEMPTS = 6
TIMEOUT_S = 10.0
JITTER = 0.2
COMPRESSIONS = ("gzip", "deflate")
USER_AGENT = f"chatgate/{__version__} (OTLP/HTTP)"


@dataclass(frozen=True)
class SenderSettings:
    """Where and how a signal's requests go."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = TIMEOUT_S
    compression: str | None = None  # gzip, deflate or None
    certificate: str | None = None  # a CA bundle (PEM) to verify the collector with
    client_certificate: str | None = None
    client_key: str | None = None


def from_env(url: str, signal: str, env: Mapping[str, str]) -> SenderSettings:
    """The settings for ``signal`` (``TRACES``, ``METRICS``) posting to ``url``."""

    def read(name: str) -> str:
        own = env.get(f"OTEL_EXPORTER_OTLP_{signal}_{name}", "").strip()
        return own or env.get(f"OTEL_EXPORTER_OTLP_{name}", "").strip()

    compression = read("COMPRESSION").lower()
    if compression not in (*COMPRESSIONS, "", "none"):
        log.warning("OTLP compression not supported, sending uncompressed")
    return SenderSettings(
        url,
        {k.lower(): v for k, v in parse_env_headers(read("HEADERS"), liberal=True).items()},
        _timeout_s(read("TIMEOUT")),
        compression if compression in COMPRESSIONS else None,
        read("CERTIFICATE") or None,
        read("CLIENT_CERTIFICATE") or None,
        read("CLIENT_KEY") or None,
    )


def _timeout_s(raw: str) -> float:
    try:
        value = float(raw) / 1000 if raw else TIMEOUT_S
    except ValueError:
        return TIMEOUT_S
    return value if value > 0 else TIMEOUT_S


@dataclass(frozen=True)
class Sent:
    """How a request ended: delivered, or why not (a status code or an error type)."""

    ok: bool
    status: int | None = None
    error: str | None = None
    attempts: int = 1


class OtlpHttpSender:
    """POSTs request bytes to one URL over a kept connection; thread-safe (one at a time)."""

    def __init__(
        self,
        settings: SenderSettings,
        *,
        wait: Callable[[float], bool] | None = None,
        now: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = lambda: random.uniform(1 - JITTER, 1 + JITTER),
    ) -> None:
        """``wait(s)``: pause before a retry, True when stopped meanwhile (default: until
        `close`); ``now``: a monotonic clock for the deadline."""
        self.settings = settings
        parts = urlsplit(settings.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("an OTLP/HTTP endpoint is an http:// or https:// URL")
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._headers = {
            "Content-Type": "application/x-protobuf",
            "User-Agent": USER_AGENT,
            **({"Content-Encoding": settings.compression} if settings.compression else {}),
            **settings.headers,
        }
        self._stopped = threading.Event()
        self._wait = wait or self._stopped.wait
        self._now, self._jitter = now, jitter
        self._lock = threading.Lock()
        self._connection: http.client.HTTPConnection | None = None
        self._context = self._tls_context() if self._tls else None
        self._via = _proxy(self._tls, self._host)
        # a plain-HTTP proxy is sent the absolute URL; a TLS one tunnels to the collector
        self._request_target = settings.url if self._via and not self._tls else self._target

    def _tls_context(self) -> ssl.SSLContext:
        found = self.settings
        context = ssl.create_default_context(cafile=found.certificate)
        if found.client_certificate:
            context.load_cert_chain(found.client_certificate, found.client_key)
        return context

    def send(self, data: bytes) -> Sent:
        """POST ``data`` (compressed as configured), retrying what may go through later."""
        body = _compressed(data, self.settings.compression)
        deadline = self._now() + self.settings.timeout_s
        with self._lock:
            for attempt in range(1, ATTEMPTS + 1):
                status, error, retry_after = self._attempt(body, deadline)
                if status is not None and 200 <= status < 300:
                    return Sent(True, status, attempts=attempt)
                retryable = status in RETRYABLE if status is not None else error is not None
                delay = retry_after if retry_after is not None else 2 ** (attempt - 1)
                delay *= self._jitter() if retry_after is None else 1.0
                if (
                    not retryable
                    or attempt == ATTEMPTS
                    or self._now() + delay > deadline
                    or self._wait(delay)
                ):
                    return Sent(False, status, error, attempt)
        return Sent(False, error="attempts")

    def _attempt(self, body: bytes, deadline: float) -> tuple[int | None, str | None, float | None]:
        """One POST: (status, None, Retry-After seconds) or (None, error type, None); a
        connection that was dropped while idle is reopened once at once."""
        for fresh in (False, True):
            connection = self._connected(max(deadline - self._now(), 0.001))
            try:
                connection.request("POST", self._request_target, body, self._headers)
                response = connection.getresponse()
                response.read()
            except (OSError, http.client.HTTPException) as exc:
                self._drop()
                if fresh or not _stale(exc):
                    return None, type(exc).__name__, None
                continue
            if response.will_close:
                self._drop()
            return response.status, None, _retry_after(response.getheader("Retry-After"))
        return None, "ConnectionError", None

    def _connected(self, timeout_s: float) -> http.client.HTTPConnection:
        if self._connection is None:
            proxy = self._via
            host, port = proxy or (self._host, self._port)
            if self._tls:
                made: http.client.HTTPConnection = http.client.HTTPSConnection(
                    host, port, timeout=timeout_s, context=self._context
                )
                if proxy is not None:
                    made.set_tunnel(self._host, self._port)
            else:
                made = http.client.HTTPConnection(host, port, timeout=timeout_s)
            self._connection = made
        self._connection.timeout = timeout_s
        if self._connection.sock is not None:
            self._connection.sock.settimeout(timeout_s)
        return self._connection

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def close(self) -> None:
        """Stop retrying (a pending retry gives up) and close the connection."""
        self._stopped.set()
        with self._lock:
            self._drop()


def _proxy(tls: bool, host: str) -> tuple[str, int] | None:
    """The proxy the environment names for the collector (HTTPS_PROXY, HTTP_PROXY, NO_PROXY)."""
    proxy = getproxies().get("https" if tls else "http")
    if not proxy or proxy_bypass(host):
        return None
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return (parts.hostname or "", parts.port or 80)


def _stale(exc: BaseException) -> bool:
    """A kept connection the collector closed while idle: worth one fresh attempt."""
    return isinstance(exc, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError))


def _compressed(data: bytes, compression: str | None) -> bytes:
    if compression == "gzip":
        return gzip.compress(data, compresslevel=6, mtime=0)
    if compression == "deflate":
        return zlib.compress(data)
    return data


def _retry_after(raw: str | None) -> float | None:
    """A Retry-After header's delay in seconds (delay-seconds or an HTTP date)."""
    if not raw:
        return None
    raw = raw.strip()
    if raw.isdigit():
        return float(raw)
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - time.time(), 0.0)
