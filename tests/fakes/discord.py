"""Fake Discord (REST API v10 + gateway) on 127.0.0.1 over HTTPS/WSS, for the real discord.py.

One aiohttp server answers ``https://discord.com/api/v10/...``, ``wss://gateway.discord.gg/``
and the CDN hosts, with a certificate from the throwaway test CA (``tests/fakes/tls.py``).
discord.py is pointed at it only through its documented ``connector=`` option::

    async with FakeDiscord() as fake:
        client = discord.Client(intents=intents, connector=fake.connector(), guild_ready_timeout=0.1)

Every REST request is recorded as a ``Call`` keyed by discord.py's own route template
(``"POST /channels/{channel_id}/messages"``); :meth:`FakeDiscord.fail` queues faults per key.
Layers: ``discord_gateway.py`` (WebSocket sessions) < ``discord_world.py`` (guilds, channels,
event builders) < ``discord_rest.py`` (route handlers) < this module (server, faults, recording);
payload shapes and limits in ``discord_payloads.py``, TLS and resolver in ``tls.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote

from aiohttp import BodyPartReader, TCPConnector, web

from tests.fakes.discord_gateway import DEFAULT_HEARTBEAT_MS, Signal
from tests.fakes.discord_payloads import (
    API_PREFIX,
    CDN_HOSTS,
    DISCORD_HOSTS,
    MISSING_ACCESS,
    MISSING_PERMISSIONS,
    TOKEN,
    UNAUTHORIZED,
    UNKNOWN_CHANNEL,
    UNKNOWN_MESSAGE,
    ApiError,
    JSONDict,
    json_response,
)
from tests.fakes.discord_rest import Call, Handler, InteractionResponse, RestRoutes
from tests.fakes.tls import LOOPBACK, loopback_connector, server_ssl_context

__all__ = ["Call", "FakeDiscord", "FaultSpec", "InteractionResponse"]


@dataclass(frozen=True)
class FaultSpec:
    """A canned failure for one request. status < 300 only delays (`delay_s`), then serves."""

    status: int
    code: int = 0
    message: str = ""
    retry_after: float | None = None  # 429: body retry_after (keep it < 1 s in tests)
    global_: bool = False
    via: bool = True  # 429 without Via is a "Cloudflare ban": discord.py raises at once
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop_connection: bool = False

    @classmethod
    def error(cls, status_code_message: tuple[int, int, str]) -> FaultSpec:
        """From a (status, code, message) triple such as MISSING_PERMISSIONS."""
        status, code, text = status_code_message
        return cls(status, code, text)

    @classmethod
    def rate_limit(
        cls, retry_after: float = 0.2, *, global_: bool = False, via: bool = True
    ) -> FaultSpec:
        return cls(429, 0, "You are being rate limited.", retry_after, global_, via)


_FORBIDDEN_BY_CODE: Final = {50001: MISSING_ACCESS, 50013: MISSING_PERMISSIONS}


class FakeDiscord(RestRoutes):
    """REST + gateway fake; use as ``async with FakeDiscord() as fake``.

    `shards` is what GET /gateway/bot recommends (AutoShardedClient obeys it);
    `interaction_window_s` is how long an interaction accepts its one callback;
    `echo_own_messages` sends the bot's own messages back as MESSAGE_CREATE, like Discord.
    """

    def __init__(
        self,
        token: str = TOKEN,
        *,
        shards: int = 1,
        heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_MS,
        interaction_window_s: float = 3.0,
        echo_own_messages: bool = True,
        default_world: bool = True,
    ) -> None:
        super().__init__(
            default_world=default_world,
            heartbeat_interval_ms=heartbeat_interval_ms,
            interaction_window_s=interaction_window_s,
            echo_own_messages=echo_own_messages,
        )
        self.token = token
        self.shards = shards
        self.port = 0
        self.calls: list[Call] = []
        self.forbidden_channels: dict[int, tuple[int, int, str]] = {}
        self._faults: dict[str, deque[FaultSpec]] = defaultdict(deque)
        self._token_revoked = False
        self._calls_signal = Signal()
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._routes: list[tuple[str, str, re.Pattern[str], Handler, bool]] = []
        for method, template, handler, auth in self._route_table():
            pattern = re.sub(r"\\{(\w+)\\}", r"(?P<\1>[^/]+)", re.escape(template))
            self._routes.append((method, template, re.compile(pattern + "$"), handler, auth))

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_route("*", API_PREFIX + "/{tail:.*}", self._api)
        app.router.add_get("/", self._gateway)
        app.router.add_route("*", "/{tail:.*}", self._cdn)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, LOOPBACK, 0, ssl_context=server_ssl_context(DISCORD_HOSTS))
        await site.start()
        self._runner, self.port = runner, runner.addresses[0][1]

    async def stop(self) -> None:
        self._closing.set()
        await self.close(1001)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def connector(self) -> TCPConnector:
        """A fresh aiohttp connector resolving the Discord hosts to this fake (others refused)
        and trusting the test CA. Each client needs its own: its session closes it."""
        if not self.port:
            raise RuntimeError("FakeDiscord is not started")
        return loopback_connector(self.port, DISCORD_HOSTS)

    def client_kwargs(self, **overrides: Any) -> dict[str, Any]:
        """Keyword arguments for ``discord.Client``: connector + guild_ready_timeout=0.1."""
        return {"connector": self.connector(), "guild_ready_timeout": 0.1, **overrides}

    # --- faults and modes --------------------------------------------------------------------

    def fail(self, route_key: str, spec: FaultSpec, times: int = 1) -> None:
        """Make the next `times` requests to `route_key` (e.g. ``"POST
        /channels/{channel_id}/messages"``) fail with `spec`, FIFO."""
        if route_key not in {f"{m} {t}" for m, t, *_ in self._routes}:
            raise ValueError(f"unknown route {route_key!r}")
        self._faults[route_key].extend([spec] * times)

    def forbid_channel(self, channel_id: int, code: int = 50013) -> None:
        """Every later request naming `channel_id` gets 403 (50013 Missing Permissions or 50001
        Missing Access) until allow_channel."""
        self.forbidden_channels[channel_id] = _FORBIDDEN_BY_CODE[code]

    def allow_channel(self, channel_id: int) -> None:
        self.forbidden_channels.pop(channel_id, None)

    def revoke_token(self) -> None:
        """REST answers 401 (LoginFailure at login) and IDENTIFY/RESUME are closed with 4004."""
        self._token_revoked = True

    def _token_valid(self, token: Any) -> bool:
        return token == self.token and not self._token_revoked

    # --- recorded traffic --------------------------------------------------------------------

    def calls_to(self, route_key: str) -> list[Call]:
        return [call for call in self.calls if call.key == route_key]

    async def wait_for(
        self,
        route_key: str,
        count: int = 1,
        *,
        timeout: float = 5.0,
        where: Callable[[Call], bool] | None = None,
    ) -> list[Call]:
        """The matching calls once at least `count` exist; AssertionError on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            matches = [c for c in self.calls_to(route_key) if where is None or where(c)]
            remaining = deadline - loop.time()
            if len(matches) >= count:
                return matches
            if remaining <= 0:
                recent = "\n".join(f"  {c.key} {c.json!r:.150}" for c in self.calls[-15:])
                raise AssertionError(
                    f"expected {count} {route_key} call(s) within {timeout}s, found "
                    f"{len(matches)}; latest:\n{recent or '  (none)'}"
                )
            await self._calls_signal.wait(remaining)

    # --- HTTP plumbing -----------------------------------------------------------------------

    async def _cdn(self, request: web.Request) -> web.StreamResponse:
        host = (request.host or "").split(":")[0]
        data = self.cdn_files.get(request.path) if host in CDN_HOSTS else None
        if data is None:
            return json_response(404, {"message": "404: Not Found", "code": 0})
        return web.Response(body=data, content_type="application/octet-stream")

    async def _api(self, request: web.Request) -> web.StreamResponse:
        raw_path = request.rel_url.raw_path[len(API_PREFIX) :]
        body, files = await _read_body(request)
        matched = self._match(request.method, raw_path)
        template, params, handler, auth = matched or (unquote(raw_path), {}, None, False)
        call = Call(
            request.method,
            template,
            params,
            unquote(raw_path),
            dict(request.query),
            body,
            dict(request.headers),
            files,
            time.monotonic(),
        )
        self.calls.append(call)
        self._calls_signal.fire()
        if handler is None:
            return json_response(404, {"message": "404: Not Found", "code": 0})
        if auth and not self._authorized(request):
            return json_response(401, ApiError(*UNAUTHORIZED).body())
        faults = self._faults.get(call.key)
        if faults:
            response = await self._apply_fault(request, faults.popleft())
            if response is not None:
                return response
        try:
            self._check_channel(params)
            result = handler(call)
        except ApiError as exc:
            return json_response(exc.status, exc.body())
        return web.Response(status=204) if result is None else json_response(200, result)

    def _match(
        self, method: str, raw_path: str
    ) -> tuple[str, dict[str, str], Handler, bool] | None:
        for route_method, template, pattern, handler, auth in self._routes:
            found = pattern.match(raw_path) if route_method == method else None
            if found:
                params = {k: unquote(v) for k, v in found.groupdict().items()}
                return template, params, handler, auth
        return None

    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        return header.startswith("Bot ") and self._token_valid(header[4:])

    async def _apply_fault(
        self, request: web.Request, fault: FaultSpec
    ) -> web.StreamResponse | None:
        if fault.delay_s > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), fault.delay_s)
        if fault.drop_connection:
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=204)
        if fault.status < 300:
            return None
        headers = dict(fault.headers)
        body = ApiError(fault.status, fault.code, fault.message or str(fault.status)).body()
        if fault.status == 429:
            retry_after = fault.retry_after if fault.retry_after is not None else 0.2
            body.update(retry_after=retry_after, **{"global": fault.global_})
            headers.update(_rate_limit_headers(retry_after, fault.global_))
            if fault.via:
                headers.setdefault("Via", "1.1 google")
        return json_response(fault.status, body, headers)

    def _check_channel(self, params: Mapping[str, str]) -> None:
        raw = params.get("channel_id")
        if raw is None:
            return
        channel_id = int(raw) if raw.isdigit() else -1
        if channel_id in self.forbidden_channels:
            raise ApiError(*self.forbidden_channels[channel_id])
        if channel_id not in self.channels:
            raise ApiError(*UNKNOWN_CHANNEL)
        message_id = params.get("message_id")
        if message_id is not None and self._message_in(channel_id, message_id) is None:
            raise ApiError(*UNKNOWN_MESSAGE)


def _rate_limit_headers(retry_after: float, global_: bool) -> dict[str, str]:
    headers = {
        "Retry-After": str(max(1, round(retry_after))),
        "X-RateLimit-Limit": "5",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
        "X-RateLimit-Reset-After": f"{retry_after:.3f}",
        "X-RateLimit-Bucket": "fake-bucket",
        "X-RateLimit-Scope": "global" if global_ else "user",
    }
    if global_:
        headers["X-RateLimit-Global"] = "true"
    return headers


async def _read_body(request: web.Request) -> tuple[Any, list[JSONDict]]:
    """JSON body, or multipart ``payload_json`` + ``files[n]`` as discord.py uploads them."""
    if request.content_type == "multipart/form-data":
        body: Any = None
        files: list[JSONDict] = []
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, BodyPartReader):
                continue
            if part.name == "payload_json":
                body = json.loads(await part.text())
            else:
                data = bytes(await part.read())
                mime = part.headers.get("Content-Type", "application/octet-stream")
                files.append(
                    {
                        "name": part.name,
                        "filename": part.filename or "file",
                        "content_type": mime,
                        "data": data,
                    }
                )
        return body, files
    raw = await request.read()
    if raw.strip() and request.content_type == "application/json":
        return json.loads(raw), []
    return None, []
