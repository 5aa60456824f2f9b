"""A throwaway test CA plus the TLS contexts and DNS resolver that aim a real SDK at a local fake.

SDKs without a base-URL option (discord.py) still accept an aiohttp connector. The fake serves
HTTPS/WSS on 127.0.0.1 with a leaf certificate for the real host names, issued by a CA that only
this test process trusts; :class:`FakeResolver` maps those host names to the fake's port and
refuses every other host, so nothing can leak to the network.
"""

from __future__ import annotations

import functools
import socket
import ssl
from collections.abc import Iterable
from typing import TYPE_CHECKING

from aiohttp import TCPConnector
from aiohttp.abc import AbstractResolver, ResolveResult

if TYPE_CHECKING:
    import trustme

LOOPBACK = "127.0.0.1"


@functools.cache
def session_ca() -> trustme.CA:
    """The process-wide (hence pytest-session-wide) throwaway CA; ECDSA keys, so it is cheap.
    Imported lazily: conftest imports the fakes, and trustme pulls in cryptography."""
    import trustme

    return trustme.CA(organization_name="chatgate test CA")


@functools.cache
def _server_context(hosts: tuple[str, ...]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    session_ca().issue_cert(*hosts, LOOPBACK).configure_cert(context)
    return context


def server_ssl_context(hosts: Iterable[str]) -> ssl.SSLContext:
    """A server context whose leaf certificate names `hosts` and 127.0.0.1 (cached per host set)."""
    return _server_context(tuple(sorted(set(hosts))))


@functools.cache
def client_ssl_context() -> ssl.SSLContext:
    """A client context that trusts the test CA and nothing else (no system roots)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    session_ca().configure_trust(context)
    return context


class FakeResolver(AbstractResolver):
    """Resolves the given host names to 127.0.0.1:`port`; any other host fails like NXDOMAIN.

    aiohttp dials the port the resolver returns, so ``https://discord.com/...`` (port 443) lands
    on the fake's ephemeral port. Refused names are kept in `refused` for assertions.
    """

    def __init__(self, port: int, hosts: Iterable[str]) -> None:
        self.port = port
        self.hosts = frozenset(host.lower() for host in hosts)
        self.refused: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if host.lower().rstrip(".") not in self.hosts:
            self.refused.append(host)
            raise OSError(socket.EAI_NONAME, f"FakeResolver refuses {host!r} (not a faked host)")
        return [
            ResolveResult(
                hostname=host,
                host=LOOPBACK,
                port=self.port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


def loopback_connector(port: int, hosts: Iterable[str]) -> TCPConnector:
    """A fresh connector (the SDK's session closes it) that reaches only the fake at `port`."""
    return TCPConnector(resolver=FakeResolver(port, hosts), ssl=client_ssl_context())
