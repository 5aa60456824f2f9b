"""The signed-webhook intake every signed channel shares: size, signature, then open for input."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from chatgate.channels.http_ingress import signed_ingress

SECRET = "s3cret-value"
LIMIT = 64


def signed(body: bytes, secret: str = SECRET) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={digest}", "Content-Type": "application/json"}


@pytest.fixture
async def intake() -> AsyncIterator[tuple[str, list[str], list[bool]]]:
    """A route on 127.0.0.1 that answers 200 with the body once the intake lets it through."""
    heard: list[str] = []
    accepting = [True]

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await signed_ingress(
            request,
            limit=LIMIT,
            kind="github",
            secret=SECRET,
            now=lambda: 1000.0,
            refused=heard.append,
            accepting=lambda: accepting[0],
        )
        return body if isinstance(body, web.Response) else web.Response(body=body)

    app = web.Application()
    app.router.add_post("/in", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/in", heard, accepting
    finally:
        await runner.cleanup()


BODY = b'{"a": 1}'


@pytest.mark.parametrize(
    ("body", "headers", "open_", "status", "why"),
    [
        (BODY, signed(BODY), True, 200, None),
        (BODY, signed(BODY, "other"), True, 401, "signature mismatch"),
        (BODY, {"Content-Type": "application/json"}, True, 401, "missing X-Hub-Signature-256"),
        (b"x" * (LIMIT + 1), signed(b"x" * (LIMIT + 1)), True, 413, None),  # before the signature
        (BODY, signed(BODY), False, 503, None),  # authentic, but the channel is stopping
        (BODY, signed(BODY, "other"), False, 401, "signature mismatch"),  # the signature first
    ],
)
async def test_signed_ingress_checks_size_then_signature_then_intake(
    intake: tuple[str, list[str], list[bool]],
    body: bytes,
    headers: dict[str, str],
    open_: bool,
    status: int,
    why: str | None,
) -> None:
    url, heard, accepting = intake
    accepting[0] = open_
    async with aiohttp.ClientSession() as http, http.post(url, data=body, headers=headers) as r:
        assert r.status == status
        text = await r.text()
    assert heard == ([why] if why else [])
    assert SECRET not in text
    if status == 200:
        assert text.encode() == body
    if status == 503:
        assert r.headers.get("Retry-After")
