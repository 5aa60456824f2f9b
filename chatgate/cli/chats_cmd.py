"""`chatgate chats list|pause|resume|reply`: a human takes over a chat, through the running
daemon's /api/chats (the daemon owns the pauses its replicas read)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatgate.config.loader import LoadedConfig

EX_USAGE, EX_UNAVAILABLE = 64, 69


def add_parser(sub: Any, config: argparse.ArgumentParser, api: argparse.ArgumentParser) -> None:
    from chatgate.cli.api_args import api_actions

    what = "take over a chat: pause the bot, reply as it, resume"
    actions, parents = api_actions(sub, "chats", what, config, api)
    actions.add_parser("list", parents=parents, help="paused chats")
    pause = actions.add_parser("pause", parents=parents, help="the bot stops answering in a chat")
    pause.add_argument("chat", metavar="CHANNEL:CHAT")
    pause.add_argument(
        "--for",
        dest="for_s",
        type=float,
        metavar="SECONDS",
        help="resume by itself after this long (0: never; default gateway.takeover.auto_resume_s)",
    )
    resume = actions.add_parser("resume", parents=parents, help="the bot answers in a chat again")
    resume.add_argument("chat", metavar="CHANNEL:CHAT")
    reply = actions.add_parser("reply", parents=parents, help="send a message to a chat as the bot")
    reply.add_argument("chat", metavar="CHANNEL:CHAT", help="channel:chat_id[:thread_id]")
    reply.add_argument("text")


def run(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    from chatgate.cli.api_client import call, show
    from chatgate.cli.common import die

    url = args.url
    if args.action == "list":
        answer = call(loaded, "/api/chats", url=url)
        return show(answer, args.json, lambda: _list(answer))
    body: dict[str, Any] = {"chat": args.chat, "by": "cli"}
    if args.action == "pause":
        if args.for_s is not None:
            body["for_s"] = args.for_s
        answer = call(loaded, "/api/chats/pause", method="POST", body=body, url=url)
        return show(answer, args.json, lambda: print(paused_line(answer["pause"])))
    if args.action == "resume":
        answer = call(loaded, "/api/chats/resume", method="POST", body=body, url=url)
        said = "resumed" if answer.get("resumed") else "was not paused"
        return show(answer, args.json, lambda: print(f"{args.chat}: {said}"))
    body["text"] = args.text
    answer = call(loaded, "/api/chats/reply", method="POST", body=body, url=url)
    if answer.get("http_status") == 502:
        if args.json:
            print(json.dumps(answer, indent=2, sort_keys=True))
        else:
            print(
                f"not delivered to {args.chat}: {answer.get('reason_code')} ({answer.get('error')})"
            )
        return EX_UNAVAILABLE
    if "error" in answer:
        die(str(answer["error"]), EX_USAGE)
    ids = ", ".join(answer.get("message_ids") or [])
    return show(answer, args.json, lambda: print(f"sent to {answer['target']} as the bot: {ids}"))


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "until resumed"
    return "until " + dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def paused_line(pause: dict[str, Any]) -> str:
    return f"{pause['chat']}: paused {_when(pause.get('until'))} (by {pause.get('by') or '?'})"


def _list(answer: dict[str, Any]) -> None:
    paused = answer.get("paused") or []
    if not paused:
        print("no paused chats")
    for pause in paused:
        print(paused_line(pause))
        for line in pause.get("tail") or []:
            who = f"human ({line['human']})" if line.get("human") else line["role"]
            print(f"    {who}: {line['content'][:100]}")
