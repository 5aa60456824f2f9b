"""Bot API requests over aiohttp, at most ``slots`` in flight, for python-telegram-bot's ``Bot``.

PTB's default transport, httpx, costs ~0.8–1.0 ms of CPU per Bot API request over TLS (anyio's
TLS stream, and an httpcore pool that polls every open connection on every request); aiohttp
costs ~0.2 ms for the same sendMessage/sendChatAction. Callers beyond ``slots`` queue on a
semaphore no larger than the connector: cheaper than aiohttp's own pool wait (~0.22 vs ~0.26 ms
per request at 64 callers on 8 slots), and the wait is untimed, as before.

Like httpx it trusts only ``SSL_CERT_FILE`` (or ``SSL_CERT_DIR``) when set; otherwise the system
store (httpx: certifi's bundle), as the Discord and Slack channels do. Like httpx it sends through
``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` unless ``NO_PROXY`` matches. Failures surface as
PTB's ``TimedOut`` and ``NetworkError``, as HTTPXRequest raises them.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import urllib.request
from pathlib import Path

import aiohttp
from yarl import URL

from chatgate import tracing
from chatgate.channels.download import stream_to_file
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData


def tls_context() -> ssl.SSLContext:
    """Verification against ``SSL_CERT_FILE``/``SSL_CERT_DIR`` if set (only them), else the system
    store."""
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    return ssl.create_default_context()


def env_proxy(url: URL) -> str | None:
    """The proxy the environment names for ``url`` (``NO_PROXY`` honoured), or None."""
    proxies = urllib.request.getproxies_environment()
    if url.host and urllib.request.proxy_bypass(url.host):
        return None
    return proxies.get(url.scheme) or proxies.get("all")


class BoundedRequest(BaseRequest):
    """A PTB request on one aiohttp session that lets at most ``slots`` requests out at once.

    Per request: ``connect_timeout`` bounds the TCP connect and TLS handshake, ``read_timeout``
    each wait for response bytes, and their sum with ``write_timeout`` the whole request (aiohttp
    has no write timeout of its own). A request waiting for a slot is not timed.
    """

    __slots__ = ("_connect", "_proxies", "_read", "_session", "_size", "_slots", "_write")

    def __init__(self, *, slots: int, timeout_s: float, connect_timeout_s: float) -> None:
        self._size = slots
        self._slots = asyncio.Semaphore(slots)
        self._read = timeout_s
        self._write = timeout_s
        self._connect = connect_timeout_s
        self._proxies: dict[tuple[str, str | None], str | None] = {}
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read

    def saturated(self) -> bool:
        """Whether every slot is taken: a request made now would queue behind the others."""
        return self._slots.locked()

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            self._session = self._open()

    def _open(self) -> aiohttp.ClientSession:
        self._proxies.clear()  # read the environment again, as a fresh httpx client would
        connector = aiohttp.TCPConnector(limit=self._size, limit_per_host=0, ssl=tls_context())
        return aiohttp.ClientSession(
            connector=connector,
            headers={"User-Agent": self.USER_AGENT},
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def shutdown(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        session = self._session
        if session is None:  # usable without initialize(), like HTTPXRequest
            session = self._session = self._open()
        elif session.closed:
            raise RuntimeError("This BoundedRequest is shut down; initialize() it again")
        target = URL(url, encoded=True)
        timeout = _timeout(
            self._read if isinstance(read_timeout, DefaultValue) else read_timeout,
            self._write if isinstance(write_timeout, DefaultValue) else write_timeout,
            self._connect if isinstance(connect_timeout, DefaultValue) else connect_timeout,
        )
        body = _body(request_data)
        # Named by the API method only: the path before it carries the bot token.
        api = target.path.rsplit("/", 1)[-1]
        with tracing.span(f"telegram {api}", kind="client", inside=True, leaf=True) as span:
            async with self._slots:
                try:
                    async with session.request(
                        method, target, data=body, timeout=timeout, proxy=self._proxy(target)
                    ) as response:
                        span.set(http__response__status_code=response.status)
                        if response.status >= 400:
                            span.fail(str(response.status))
                        return response.status, await response.read()
                except TimeoutError as err:  # aiohttp's own timeouts subclass it
                    raise TimedOut from err
                except aiohttp.ClientError as err:
                    raise NetworkError(f"aiohttp.{err.__class__.__name__}: {err}") from err

    async def stream_to(self, url: str, dest: Path, max_bytes: int) -> int:
        """GET a Bot API file URL into ``dest`` chunk by chunk (PTB's own download reads the
        whole body into memory), on this session's connections, proxy and TLS settings."""
        session = self._session
        if session is None or session.closed:
            session = self._session = self._open()
        target = URL(url, encoded=True)
        return await stream_to_file(session, url, dest, max_bytes, proxy=self._proxy(target))

    def _proxy(self, url: URL) -> str | None:
        key = (url.scheme, url.host)
        if key not in self._proxies:
            self._proxies[key] = env_proxy(url)
        return self._proxies[key]


@functools.lru_cache(maxsize=64)
def _timeout(
    read: float | None, write: float | None, connect: float | None
) -> aiohttp.ClientTimeout:
    parts = (read, write, connect)
    total = None if None in parts else sum(p for p in parts if p is not None)
    return aiohttp.ClientTimeout(total=total, sock_connect=connect, sock_read=read)


def _body(request_data: RequestData | None) -> dict[str, str] | aiohttp.FormData | None:
    """Form fields as PTB sends them (url-encoded), or multipart when there are files."""
    if request_data is None:
        return None
    fields = request_data.json_parameters
    files = request_data.multipart_data
    if not files:
        return fields
    form = aiohttp.FormData(fields)
    for name, (filename, content, mimetype) in files.items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form
