"""Telegram floor: a bare python-telegram-bot Application, long polling, one reply per message.

``--mode llm`` answers each text message with one ``litellm.acompletion`` call (same arguments as
chatgate's litellm agent: no history, no system prompt); ``--mode echo`` answers with the text.
With ``--daemon-litellm`` litellm gets chatgate's public daemon settings first (the same
module-level switches and connection-pool bound), so a comparison measures the rest, not them.
Updates are handled concurrently (``concurrent_updates(True)``), as a competent bare bot would.
With ``--webhook-port`` the same process also serves the HMAC webhook handler of
``bench.floors.hmac_echo``, answering ``payload.text`` the same way (the concurrency floor).
Serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from bench.floors.model_args import add_model_args, parse_with_model

TIMEOUT_S = 30.0
SEND_POOL = 8  # as chatgate: httpcore spends CPU per request on every open connection
Reply = Callable[[str], Awaitable[str]]
App = Application[Any, Any, Any, Any, Any, Any]
Hook = Callable[[App], Coroutine[Any, Any, None]]


def make_reply(args: argparse.Namespace) -> Reply:
    if args.mode == "echo":

        async def echo(text: str) -> str:
            return text

        return echo
    if getattr(args, "daemon_litellm", False):  # the discord floor has no such option
        from chatgate.agents.litellm_import import import_litellm

        litellm = import_litellm()
    else:
        import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        litellm.drop_params = True

    async def model(text: str) -> str:
        response = await litellm.acompletion(
            model=args.model,
            messages=[{"role": "user", "content": text}],
            api_base=args.llm_base,
            api_key=args.api_key,
            timeout=TIMEOUT_S,
            max_retries=0,
        )
        return str(response.choices[0].message.content or "")

    return model


def webhook_hooks(args: argparse.Namespace, reply: Reply) -> tuple[Hook, Hook]:
    """post_init / post_shutdown hooks that run the HMAC webhook handler on the bot's loop."""
    from aiohttp import web  # only this mode needs aiohttp: keep it off the plain bot's startup

    from bench.floors.hmac_echo import build_app

    runners: list[web.AppRunner] = []

    async def answer(body: bytes) -> bytes:
        text = str(json.loads(body).get("text", ""))
        return json.dumps({"reply": await reply(text), "reason_code": "text"}).encode()

    async def start(app: App) -> None:
        runner = web.AppRunner(
            build_app(args.webhook_secret.encode(), args.webhook_path, answer), access_log=None
        )
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", args.webhook_port).start()
        runners.append(runner)

    async def stop(app: App) -> None:
        for runner in runners:
            await runner.cleanup()

    return start, stop


def build(args: argparse.Namespace) -> App:
    reply = make_reply(args)

    async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None or message.text is None:
            return
        await context.bot.send_message(chat_id=message.chat_id, text=await reply(message.text))

    builder = (
        Application.builder()
        .token(args.token)
        .base_url(args.base_url)
        .base_file_url(args.base_url.removesuffix("/bot") + "/file/bot")
        .concurrent_updates(True)
        .connection_pool_size(SEND_POOL)
        .pool_timeout(TIMEOUT_S)
    )
    if args.webhook_port:
        start, stop = webhook_hooks(args, reply)
        builder = builder.post_init(start).post_shutdown(stop)
    app = builder.build()
    app.add_handler(MessageHandler(filters.TEXT, on_text))
    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floors.ptb_echo", description=__doc__)
    parser.add_argument("--base-url", required=True, help="Bot API base, ending in /bot")
    parser.add_argument("--token", required=True)
    add_model_args(parser)
    parser.add_argument(
        "--daemon-litellm", action="store_true", help="apply chatgate's litellm settings first"
    )
    parser.add_argument("--webhook-port", type=int, default=0, help="also serve the HMAC route")
    parser.add_argument("--webhook-secret", default="")
    parser.add_argument("--webhook-path", default="/hooks/llm")
    args = parse_with_model(parser, argv)
    if args.webhook_port and not args.webhook_secret:
        parser.error("--webhook-port needs --webhook-secret")
    build(args).run_polling(poll_interval=0.0, timeout=10, allowed_updates=["message"])


if __name__ == "__main__":
    main()
