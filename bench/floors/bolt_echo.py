"""Slack floor: a bare slack-bolt app in Socket Mode answering every message with one post.

``AsyncApp`` + ``AsyncSocketModeHandler`` with ``process_before_response=True`` (the listener
finishes before the envelope is acked, as chatgate acks only what it journaled), one shared aiohttp
session for the ``AsyncWebClient`` (``base_url`` points at the fake Slack; the connector is as big
as chatgate's), and a listener that answers with one ``litellm.acompletion`` (``--mode llm``, the
same arguments as chatgate's litellm agent) or with the text (``--mode echo``), posted with
``chat.postMessage`` in the same DM or thread. No journal, no sessions, no retries: the least
work that still answers. Serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from typing import Any

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bench.floors.model_args import add_model_args, parse_with_model
from bench.floors.ptb_echo import Reply, make_reply

CONNECTOR_LIMIT = 16  # chatgate: max(16, 2 × send_concurrency 8)
TIMEOUT_S = 30


def build_app(client: AsyncWebClient, reply: Reply) -> AsyncApp:
    """The Bolt app: one listener for ``message`` events from people."""
    app = AsyncApp(
        client=client,
        process_before_response=True,
        request_verification_enabled=False,  # Socket Mode: nothing to verify
        logger=logging.getLogger("floor.bolt"),
    )

    @app.event("message")
    async def on_message(event: dict[str, Any], client: AsyncWebClient) -> None:
        if event.get("subtype") or event.get("bot_id") or not event.get("text"):
            return
        text = await reply(str(event["text"]))
        thread = event.get("thread_ts")
        await client.chat_postMessage(channel=str(event["channel"]), text=text, thread_ts=thread)

    return app


async def serve(args: argparse.Namespace) -> None:
    reply = make_reply(args)
    connector = aiohttp.TCPConnector(limit=CONNECTOR_LIMIT)
    async with aiohttp.ClientSession(connector=connector) as session:
        client = AsyncWebClient(
            token=args.bot_token, base_url=args.api_url, session=session, timeout=TIMEOUT_S
        )
        handler = AsyncSocketModeHandler(build_app(client, reply), args.app_token)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await handler.connect_async()  # type: ignore[no-untyped-call]
        try:
            await stop.wait()
        finally:
            await handler.close_async()  # type: ignore[no-untyped-call]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floors.bolt_echo", description=__doc__)
    parser.add_argument("--api-url", required=True, help="Web API base, ending in /api/")
    parser.add_argument("--bot-token", required=True)
    parser.add_argument("--app-token", required=True)
    add_model_args(parser)
    parser.add_argument(
        "--daemon-litellm", action="store_true", help="apply chatgate's litellm settings first"
    )
    args = parse_with_model(parser, argv)
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
