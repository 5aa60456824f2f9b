"""WhatsApp floor: a bare aiohttp webhook and Graph API client answering every message.

The least a competent Cloud API bot does with the library chatgate uses (aiohttp): verify
``X-Hub-Signature-256`` over the raw body, parse the post, answer Meta 200 at once and, in a
task, mark the message read, get the answer (one ``litellm.acompletion`` with ``--mode llm``,
the same arguments as chatgate's litellm agent, or the text itself with ``--mode echo``) and
send it quoting the message, on one shared aiohttp session (as big as chatgate's). No journal,
no dedupe, no sessions, no window, no retries. Prints ``READY <port>``; serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import logging
import signal
from typing import Any

import aiohttp
from aiohttp import web

from bench.floors.model_args import add_model_args, parse_with_model
from bench.floors.ptb_echo import Reply, make_reply

CONNECTOR_LIMIT = 16  # chatgate's channels.whatsapp.send_concurrency default
TIMEOUT_S = 30


def build_app(
    args: argparse.Namespace, session: aiohttp.ClientSession, reply: Reply
) -> web.Application:
    secret = args.app_secret.encode()
    url = f"{args.api_base}/v21.0/{args.phone_number_id}/messages"
    tasks: set[asyncio.Task[None]] = set()

    async def post(body: dict[str, Any]) -> None:
        async with session.post(url, json=body) as response:
            await response.read()

    async def answer(message: dict[str, Any]) -> None:
        wamid, user = message["id"], message["from"]
        await post({"messaging_product": "whatsapp", "status": "read", "message_id": wamid})
        text = await reply(message["text"]["body"])
        await post(
            {
                "messaging_product": "whatsapp",
                "recipient_type": "individual",
                "to": user,
                "type": "text",
                "text": {"body": text, "preview_url": False},
                "context": {"message_id": wamid},
            }
        )

    async def webhook(request: web.Request) -> web.Response:
        body = await request.read()
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, request.headers.get("X-Hub-Signature-256", "")):
            return web.json_response({"error": "invalid signature"}, status=401)
        for entry in json.loads(body).get("entry", []):
            for change in entry.get("changes", []):
                for message in change.get("value", {}).get("messages", []):
                    if message.get("type") == "text":
                        task = asyncio.create_task(answer(message))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/whatsapp/webhook", webhook)
    return app


async def serve(args: argparse.Namespace) -> None:
    reply = make_reply(args)
    connector = aiohttp.TCPConnector(limit=CONNECTOR_LIMIT)
    headers = {"Authorization": f"Bearer {args.access_token}"}
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
    async with aiohttp.ClientSession(
        connector=connector, headers=headers, timeout=timeout
    ) as session:
        runner = web.AppRunner(
            build_app(args, session, reply), access_log=None, handle_signals=False
        )
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", args.port).start()
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
    parser = argparse.ArgumentParser(prog="python -m bench.floors.wa_echo", description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-base", required=True, help="Graph API origin (the fake's)")
    parser.add_argument("--access-token", required=True)
    parser.add_argument("--app-secret", required=True)
    parser.add_argument("--phone-number-id", required=True)
    add_model_args(parser)
    args = parse_with_model(parser, argv)
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
