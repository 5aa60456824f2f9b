"""The aiohttp connector discord.py talks through, built from `channels.discord` settings.

discord.py has no base-URL setting; its documented hook is `connector=` ("a dns resolver or
sslcontext"). chatgate always passes its own: by default system DNS and system CAs, i.e. exactly
discord.py's own behaviour. `resolve` pins named hosts to another address (an egress proxy, a
self-hosted relay, a test server) and `ca` adds trusted CA certificates. TLS is still verified
against the original host name, so an override can only reach a server holding a certificate
for that name from a trusted CA.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Mapping
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from chatgate.channels.discord.config import DiscordChannelConfig, parse_address

GATEWAY_URL = "wss://gateway.discord.gg/"


class StaticResolver(AbstractResolver):
    """Answers configured hosts from a static table; asks the system resolver for the rest."""

    def __init__(self, overrides: Mapping[str, tuple[str, int]]) -> None:
        self._overrides = {host.lower(): target for host, target in overrides.items()}
        self._system: AbstractResolver = DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        target = self._overrides.get(host.lower().rstrip("."))
        if target is None:
            return await self._system.resolve(host, port, family)
        address, target_port = target
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:  # a name: resolve it, but keep the original host for TLS
            found = await self._system.resolve(address, target_port, family)
            return [{**r, "hostname": host} for r in found]
        kind = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
        return [
            {
                "hostname": host,
                "host": address,
                "port": target_port,
                "family": kind,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
        ]

    async def close(self) -> None:
        await self._system.close()


def ssl_context(ca: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca:
        context.load_verify_locations(cadata=ca)
    return context


def build_connector(config: DiscordChannelConfig) -> aiohttp.TCPConnector:
    """A fresh connector (discord.py closes it with the client, so one per connection)."""
    overrides = {host: parse_address(address) for host, address in config.resolve.items()}
    options: dict[str, Any] = {"limit": 0, "ssl": ssl_context(config.ca)}
    if overrides:
        options["resolver"] = StaticResolver(overrides)
    return aiohttp.TCPConnector(**options)
