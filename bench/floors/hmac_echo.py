"""Webhook floor: a bare aiohttp handler that verifies the body's HMAC-SHA256 and answers a constant.

`python -m bench.floors.hmac_echo --port 0 --secret S` prints ``READY <port>`` once listening and
serves until SIGTERM/SIGINT. Same header and scheme as chatgate's ``signature: generic`` routes.
``build_app`` takes an optional ``answer`` so the PTB floor can mount the same handler with a
model call behind it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import signal
from collections.abc import Awaitable, Callable

from aiohttp import web

HEADER = "X-Signature-256"
REPLY = b'{"reply": "ok", "reason_code": "text"}'
Answer = Callable[[bytes], Awaitable[bytes]]


def build_app(secret: bytes, path: str, answer: Answer | None = None) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, request.headers.get(HEADER, "").strip()):
            return web.json_response({"error": "invalid signature"}, status=401)
        reply = REPLY if answer is None else await answer(body)
        return web.Response(body=reply, content_type="application/json")

    async def ready(request: web.Request) -> web.Response:
        return web.json_response({"status": "ready"})

    app = web.Application()
    app.router.add_post(path, handle)
    app.router.add_get("/readyz", ready)
    return app


async def serve(port: int, secret: str, path: str) -> None:
    runner = web.AppRunner(build_app(secret.encode(), path), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, done.set)
    print(f"READY {runner.addresses[0][1]}", flush=True)
    try:
        await done.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floors.hmac_echo", description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--path", default="/hooks/bench")
    parser.add_argument(
        "--import-litellm",
        action="store_true",
        help="import litellm (chatgate's daemon settings) before listening, as a model bot must",
    )
    args = parser.parse_args(argv)
    if args.import_litellm:
        from chatgate.agents.litellm_import import import_litellm

        import_litellm()
    asyncio.run(serve(args.port, args.secret, args.path))


if __name__ == "__main__":
    main()
