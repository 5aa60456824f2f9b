"""Matrix floor: a bare mautrix bot answering every text message it syncs.

The least a competent mautrix bot does with the library chatgate's Matrix channel runs on: its
own `/sync` long poll, and for each `m.room.message` from someone else, in a task, get the
answer (one ``litellm.acompletion`` with ``--mode llm``, the same arguments as chatgate's litellm
agent, or the text itself with ``--mode echo``) and send it replying to the message. It joins
every invite. No journal, no dedupe, no sessions, no retries, no receipts. Prints ``READY 0``
once its first sync is done; runs until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from typing import Any

from mautrix.client import Client
from mautrix.types import EventType, RoomID, UserID

from bench.floors.model_args import add_model_args, parse_with_model
from bench.floors.ptb_echo import make_reply


async def run(args: argparse.Namespace) -> None:
    reply = make_reply(args)
    client = Client(mxid=UserID(args.user_id), base_url=args.homeserver, token=args.access_token)
    tasks: set[asyncio.Task[None]] = set()

    async def answer(room: str, event: dict[str, Any]) -> None:
        text = await reply(str(event["content"].get("body", "")))
        content = {
            "msgtype": "m.text",
            "body": text,
            "m.relates_to": {"m.in_reply_to": {"event_id": event["event_id"]}},
        }
        await client.send_message_event(RoomID(room), EventType.ROOM_MESSAGE, content)

    def dispatch(data: dict[str, Any]) -> None:
        rooms = data.get("rooms", {})
        for room in rooms.get("invite", {}):
            task = asyncio.create_task(client.join_room_by_id(RoomID(room)))  # type: ignore[arg-type]
            tasks.add(task)  # type: ignore[arg-type]
            task.add_done_callback(tasks.discard)  # type: ignore[arg-type]
        for room, joined in rooms.get("join", {}).items():
            for event in joined.get("timeline", {}).get("events", []):
                if event.get("type") == "m.room.message" and event.get("sender") != args.user_id:
                    task = asyncio.create_task(answer(room, event))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)

    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, done.set)
    since = (await client.sync(timeout=0))["next_batch"]  # history is not answered
    print("READY 0", flush=True)

    async def poll() -> None:
        nonlocal since
        while True:
            data = await client.sync(since=since, timeout=30_000)
            dispatch(data)
            since = data["next_batch"]

    poller = asyncio.create_task(poll())
    await done.wait()
    poller.cancel()
    await client.api.session.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.floors.mautrix_echo", description=__doc__
    )
    parser.add_argument("--homeserver", required=True)
    parser.add_argument("--user-id", required=True)
    parser.add_argument("--access-token", required=True)
    add_model_args(parser)
    args = parse_with_model(parser, argv)
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
