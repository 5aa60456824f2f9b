"""Discord floor: a bare discord.py bot answering every DM with one send, nothing else.

``--mode llm`` answers with one ``litellm.acompletion`` call (the same arguments as chatgate's
litellm agent), ``--mode echo`` with the text. Like chatgate it shows "typing…" once an answer
takes longer than half a second, so both sides make the same Discord calls. It reaches the fake
Discord the way chatgate does, through discord.py's documented ``connector=`` (a static resolver
and the test CA); no journal, no sessions, no retries: the least work that still answers.
Serves until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path

import aiohttp
import discord

from bench.floors.model_args import add_model_args, parse_with_model
from bench.floors.ptb_echo import make_reply
from chatgate.channels.discord.net import StaticResolver, ssl_context

HOSTS = ("discord.com", "gateway.discord.gg")
TYPING_AFTER_S = 0.5  # as chatgate.gateway.delivery.presence


async def _typing_later(channel: discord.abc.Messageable) -> None:
    await asyncio.sleep(TYPING_AFTER_S)
    await channel.typing()


async def serve(args: argparse.Namespace) -> None:
    reply = make_reply(args)
    overrides = {host: ("127.0.0.1", args.port) for host in HOSTS}
    connector = aiohttp.TCPConnector(
        resolver=StaticResolver(overrides), ssl=ssl_context(args.ca_pem), limit=0
    )

    class Floor(discord.AutoShardedClient):
        async def on_message(self, message: discord.Message) -> None:
            if self.user is not None and message.author.id == self.user.id:
                return
            typing = asyncio.create_task(_typing_later(message.channel))
            try:
                text = await reply(message.content)
            finally:
                typing.cancel()
            await message.channel.send(text)

    intents = discord.Intents.none()
    intents.guilds = intents.guild_messages = intents.dm_messages = intents.message_content = True
    client = Floor(
        intents=intents,
        connector=connector,
        max_messages=None,
        chunk_guilds_at_startup=False,
        guild_ready_timeout=0.05,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    runner = asyncio.create_task(client.start(args.token))
    await asyncio.wait({runner, asyncio.ensure_future(stop.wait())}, return_when="FIRST_COMPLETED")
    await client.close()
    if runner.done() and runner.exception() is not None:
        raise runner.exception()  # type: ignore[misc]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.floors.discordpy_echo", description=__doc__
    )
    parser.add_argument("--port", type=int, required=True, help="the fake Discord's port")
    parser.add_argument("--ca-file", required=True, help="the fake's CA certificate (PEM)")
    parser.add_argument("--token", required=True)
    add_model_args(parser)
    args = parse_with_model(parser, argv)
    args.ca_pem = Path(args.ca_file).read_text(encoding="utf-8")
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
