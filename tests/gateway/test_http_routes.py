"""The gateway's one HTTP server: channel routes (exact, prefix, WebSocket) and /api auth."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path

import aiohttp
from aiohttp import web

from chatgate.gateway.http.app import DynamicRoutes, build_app
from chatgate.gateway.http.server import AcceptErrorThrottle
from tests.fakes.llm import FakeLLM
from tests.harness import http, operator, running, url, write_config

TOKEN = "Zq8vN2kLp4Rt7Wx1Yc5Bm9Hd3Gf6Js0A"


def text(body: str) -> web.Response:
    return web.Response(text=body)


async def test_exact_routes_win_then_the_longest_prefix(tmp_path: Path) -> None:
    path = write_config(tmp_path, "agents:\n  default: {backend: echo}\n")
    async with running(path) as gw, http() as client:
        routes: DynamicRoutes = gw.routes

        async def page(request: web.Request) -> web.Response:
            return text(f"page {request.path}")

        async def asset(request: web.Request) -> web.Response:
            return text(f"asset {request.path}")

        async def exact(request: web.Request) -> web.Response:
            return text("exact")

        async def socket(request: web.Request) -> web.WebSocketResponse:
            ws = web.WebSocketResponse()
            await ws.prepare(request)
            async for message in ws:
                await ws.send_str("echo " + message.data)
            return ws

        routes.add("GET", "/chat", page, prefix=True)
        routes.add("GET", "/chat/static", asset, prefix=True)
        routes.add("GET", "/chat/exact", exact)
        routes.add("GET", "/chat/ws", socket)
        for path_, expected in [
            ("/chat", "page /chat"),
            ("/chat/", "page /chat/"),
            ("/chat/room/7", "page /chat/room/7"),
            ("/chat/static/app.js", "asset /chat/static/app.js"),
            ("/chat/exact", "exact"),
        ]:
            async with client.get(url(gw, path_)) as resp:
                assert (resp.status, await resp.text()) == (200, expected)
        async with client.get(url(gw, "/chatter")) as resp:
            assert resp.status == 404  # a prefix covers its own path and below, not siblings
        async with client.post(url(gw, "/chat/room")) as resp:
            assert resp.status == 405
        async with client.ws_connect(url(gw, "/chat/ws")) as ws:
            await ws.send_str("hi")
            assert (await ws.receive()).data == "echo hi"
        routes.remove("/chat")
        async with client.get(url(gw, "/chat/room/7")) as resp:
            assert resp.status == 404


async def test_changing_anything_needs_a_token_even_on_loopback(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    path = write_config(tmp_path, "agents:\n  default: {backend: echo}\n")
    async with running(path) as gw, http() as client:
        async with client.get(url(gw, "/api/status")) as resp:
            assert resp.status == 200  # reading is open on loopback without a configured token
        for method, api in [
            ("POST", "/api/reload"),
            ("POST", "/api/dlq/1/replay"),
            ("DELETE", "/api/dlq/1"),
            ("POST", "/api/pairing/approve"),
            ("POST", "/api/pairing/deny"),
            ("POST", "/api/pairing/revoke"),
            ("POST", "/api/sessions/reset"),
            ("POST", "/api/channels/memory/restart"),
            ("PUT", "/api/status"),
            ("PATCH", "/api/reload"),
        ]:
            async with client.request(method, url(gw, api)) as resp:
                assert resp.status == 401, api
        async with client.post(url(gw, "/api/reload"), headers=operator(gw)) as resp:
            assert resp.status == 200


async def test_the_bearer_scheme_is_case_insensitive_and_the_token_is_not(tmp_path: Path) -> None:
    path = write_config(tmp_path, f"  api_token: {TOKEN}\nagents:\n  default: {{backend: echo}}\n")
    async with running(path) as gw, aiohttp.ClientSession() as client:
        for header, status in [
            (f"Bearer {TOKEN}", 200),
            (f"bearer {TOKEN}", 200),
            (f"BEARER  {TOKEN} ", 200),
            (f"Bearer {TOKEN.lower()}", 401),
            (f"Basic {TOKEN}", 401),
            ("", 401),
        ]:
            async with client.get(
                url(gw, "/api/status"), headers={"Authorization": header}
            ) as resp:
                assert resp.status == status, header


async def test_slow_headers_are_cut_off_and_connections_are_capped(tmp_path: Path) -> None:
    path = write_config(tmp_path, "agents:\n  default: {backend: echo}\n")
    path.write_text(
        path.read_text().replace(
            "port: 0}", "port: 0, keepalive_timeout_s: 0.5, max_connections: 8}"
        )
    )
    async with running(path) as gw:
        port = gw.port
        assert port is not None
        slow = []
        for _ in range(12):  # more than the cap, each sending half a request line
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /healthz HT")
            slow.append((reader, writer))
        closed_early = 0
        for reader, _ in slow[8:]:
            closed_early += (await asyncio.wait_for(reader.read(), 2)) == b""
        assert closed_early == 4  # past the cap: closed at once, before any timeout
        for reader, _ in slow[:8]:  # the slow ones are cut off after keepalive_timeout_s
            assert await asyncio.wait_for(reader.read(), 3) == b""
        for _, writer in slow:
            writer.close()
        async with http() as client, client.get(url(gw, "/healthz")) as resp:
            assert resp.status == 200  # honest clients are served again at once


def test_accept_failures_are_logged_once_per_interval() -> None:
    # An interval longer than the monotonic clock has run (as on a host up for minutes): the
    # first failure must still be reported.
    throttle = AcceptErrorThrottle(every_s=time.monotonic() + 3600)

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("asyncio", logging.ERROR, "", 0, msg, None, None)

    assert throttle.filter(record("socket.accept() out of system resource"))
    assert not any(
        throttle.filter(record("socket.accept() out of system resource")) for _ in range(500)
    )
    assert throttle.suppressed == 500
    assert throttle.filter(record("something else entirely"))


async def test_every_api_route_of_the_app_refuses_a_call_without_the_token(tmp_path: Path) -> None:
    """The app has no middleware: each route carries the token guard itself, so a route added
    without it would be open. Walk the app's own route table, not a hand-written list."""
    path = write_config(tmp_path, f"  api_token: {TOKEN}\nagents:\n  default: {{backend: echo}}\n")
    async with running(path) as gw, aiohttp.ClientSession() as client:
        calls = sorted(
            {
                (route.method, re.sub(r"\{[^}]+\}", "x", route.resource.canonical))
                for route in build_app(gw, gw.routes).router.routes()
                if route.resource is not None and route.resource.canonical.startswith("/api/")
            }
        )
        assert len(calls) > 10, calls
        for method, api in calls:
            async with client.request(method, url(gw, api)) as resp:
                assert resp.status == 401, (method, api)
        async with client.get(url(gw, "/api/no-such-route")) as resp:
            assert resp.status == 401  # the token before the 404: routes are not enumerable
