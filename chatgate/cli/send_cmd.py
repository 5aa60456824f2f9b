"""`chatgate send CHANNEL:CHAT "text"`: a message from the operator through the running daemon
(POST /api/send: delivered with the platform's message id, or in the DLQ with the reason)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatgate.config.loader import LoadedConfig

EX_USAGE, EX_UNAVAILABLE = 64, 69


def add_parser(sub: Any, config: argparse.ArgumentParser, api: argparse.ArgumentParser) -> None:
    send = sub.add_parser("send", parents=[config, api], help="send a message to a chat now")
    send.add_argument("to", metavar="CHANNEL:CHAT", help="channel:chat_id[:thread_id]")
    send.add_argument("text")
    send.add_argument("--json", action="store_true", help="machine-readable output")


def run(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    from chatgate.cli.api_client import call
    from chatgate.cli.common import die

    answer = call(loaded, "/api/send", method="POST", body={"to": args.to, "text": args.text})
    if args.json:
        print(json.dumps(answer, indent=2, sort_keys=True))
    if answer.get("http_status") in (400, 429):
        die(str(answer.get("error")), EX_USAGE)
    if not answer.get("delivered"):
        if not args.json:
            print(
                f"not delivered to {args.to}: {answer.get('reason_code')} ({answer.get('error')})"
            )
        return EX_UNAVAILABLE
    if not args.json:
        print(f"sent to {answer['target']}: message {', '.join(answer['message_ids'])}")
    return 0
